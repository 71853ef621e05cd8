import type { Conversation } from "./conversation";
import type { Plan } from "./plan";

/** Token counts of one answer, in the offline model's deterministic arithmetic. */
export type TokenCounts = {
  /** Every input token: ceil(characters of the request body / 4), cache reads included. */
  input: number;
  /** The system prompt's tokens, when it is marked for caching and the transcript has an assistant turn. */
  cacheRead: number;
  output: number;
};

const tokens = (characters: number): number => Math.ceil(characters / 4);

/** Counts the tokens of a text or tool-call answer (a tool call counts its name and arguments JSON). */
export function countTokens(conversation: Conversation, plan: Exclude<Plan, { kind: "error" }>): TokenCounts {
  const input = tokens(conversation.bodyLength);
  const cached = conversation.cacheMarked && conversation.hasAssistant;
  const cacheRead = cached ? Math.min(tokens(conversation.systemText.length), input) : 0;
  const characters =
    plan.kind === "text"
      ? plan.text.length
      : plan.calls.reduce((sum, call) => sum + call.name.length + JSON.stringify(call.arguments).length, 0);
  return { input, cacheRead, output: tokens(characters) };
}
