import { fnv1a } from "../core/fnv1a";
import { alwaysThinks } from "../providers/model-catalog";
import { InvalidRequest } from "./conversation";
import { asArray, isObject, type JsonObject } from "./values";

const MIN_BUDGET = 1024;
const SIGNED = "agentry-offline-thinking:";

/** The offline model's signature of a thinking text: opaque, deterministic, checked when it comes back. */
export const signThinking = (thinking: string): string => btoa(`${SIGNED}${fnv1a(thinking)}`);

/** A thinking block sent back: its signature must be the one the offline model gave its text. */
export function thinkingSignatureValid(block: JsonObject): boolean {
  return typeof block.thinking === "string" && typeof block.signature === "string" && block.signature === signThinking(block.thinking);
}

/** Whether a signature is one the offline model gives (of some text), so a mismatch means the text was changed. */
function wellFormed(signature: unknown): boolean {
  try {
    return typeof signature === "string" && atob(signature).startsWith(SIGNED);
  } catch {
    return false;
  }
}

/**
 * The API's message for a thinking block sent back that does not match its signature: changed
 * text (a signature of the model's own form) in the latest assistant message cannot be
 * modified; otherwise the signature is invalid. Null when the block is as signed.
 */
export function thinkingBlockProblem(block: JsonObject, latest: boolean): string | null {
  if (thinkingSignatureValid(block)) return null;
  if (latest && wellFormed(block.signature))
    return "`thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified.";
  return "Invalid `signature` in `thinking` block";
}

const blocksOf = (message: JsonObject | undefined): JsonObject[] =>
  typeof message?.content === "string" ? [{ type: "text", text: message.content }] : asArray(message?.content).filter(isObject);

/**
 * Rules of `thinking` beyond its budget: the always-thinking models (Fable 5.x, Mythos 5.x,
 * Opus 5.5) refuse `disabled`; with thinking on, the assistant turn of an unfinished tool loop
 * (the request ends with its tool results) must start with a thinking block.
 */
export function checkThinkingRules(body: JsonObject, messages: JsonObject[]): void {
  const thinking = isObject(body.thinking) ? body.thinking : null;
  if (thinking?.type === "disabled" && alwaysThinks(String(body.model ?? ""))) {
    throw new InvalidRequest(
      '"thinking.type.disabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.',
    );
  }
  if (thinking?.type !== "enabled" && thinking?.type !== "adaptive") return;
  const last = messages.at(-1);
  if (last?.role !== "user" || !blocksOf(last).some((block) => block.type === "tool_result")) return;
  let start = messages.findLastIndex((message) => message.role === "assistant");
  if (start < 0) return;
  while (start > 0 && messages[start - 1]?.role === "assistant") start -= 1;
  const type = String(blocksOf(messages[start])[0]?.type ?? "");
  if (type === "thinking" || type === "redacted_thinking") return;
  throw new InvalidRequest(
    `messages.${start}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${type}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking`,
  );
}

/**
 * Whether the request asks for extended thinking (`thinking: { type: "enabled", budget_tokens }`
 * or `{ type: "adaptive" }`), refusing a budget the API refuses.
 */
export function thinkingEnabled(body: JsonObject): boolean {
  const thinking = body.thinking;
  if (!isObject(thinking) || thinking.type === "disabled") return false;
  if (thinking.type === "adaptive") return true;
  const budget = thinking.budget_tokens;
  if (typeof budget !== "number" || budget < MIN_BUDGET) {
    throw new InvalidRequest(`thinking.enabled.budget_tokens: Input should be greater than or equal to ${MIN_BUDGET}`);
  }
  if (typeof body.max_tokens === "number" && body.max_tokens <= budget) {
    throw new InvalidRequest(
      "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size",
    );
  }
  return true;
}
