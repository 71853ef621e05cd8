import type { Block } from "../core/messages";
import type { ModelResponse } from "../providers/types";
import type { RunError } from "./run-record";

/** A model answer that ends its run: the error it ends with, and what the transcript keeps of it. */
export type StoppedAnswer = { error: RunError; content: Block[] };

/**
 * A model answer that did not end the way an answer ends (docs/providers.md, Stop reasons): cut
 * at `max_output_tokens` (`output_truncated`), cut where the context window filled
 * (`context_window_exceeded`), declined by the model or the provider's filter (`refused`), or a
 * turn the provider paused (`provider_error`). Null for an answer (`end_turn`, `tool_calls`,
 * or a reason nobody documented).
 *
 * The transcript keeps only the answer's text: its tool calls are never executed (their
 * arguments may be cut) and a call without its result is refused by every provider; its
 * reasoning goes too (a cut Anthropic thinking block may lack its signature, and a Responses
 * reasoning item is refused without the item that should have followed it).
 */
export function stoppedAnswer(
  response: Pick<ModelResponse, "content" | "stop_reason" | "stop_detail">,
  maxOutputTokens: number,
): StoppedAnswer | null {
  const error = stopError(response.stop_reason, response.stop_detail ?? response.stop_reason, maxOutputTokens);
  if (!error) return null;
  // Plain text, without provider ids: nothing points the provider at the reasoning that goes.
  const text = response.content.flatMap((b): Block[] => (b.type === "text" ? [{ type: "text", text: b.text }] : []));
  return { error, content: text.length > 0 ? text : [{ type: "text", text: "" }] };
}

function stopError(reason: ModelResponse["stop_reason"], detail: string, maxOutputTokens: number): RunError | null {
  const fail = (type: RunError["type"], message: string): RunError => ({ type, message: `${message} (${detail})`, retryable: false });
  switch (reason) {
    case "max_tokens":
      return fail("output_truncated", `The answer was cut at max_output_tokens (${maxOutputTokens}); no tool call of it was executed`);
    case "context_window":
      return fail(
        "context_window_exceeded",
        "The answer was cut where it filled the model's context window; no tool call of it was executed",
      );
    case "refusal":
      return fail("refused", "The model declined to answer");
    case "pause":
      return fail(
        "provider_error",
        "The provider paused the model's turn, which only its server tools do; Agentry uses none and does not continue it",
      );
    case "end_turn":
    case "tool_calls":
    case "other":
      return null;
  }
}
