import { fnv1a } from "../core/fnv1a";
import { InvalidRequest } from "./conversation";
import { isObject, type JsonObject } from "./values";

const MIN_BUDGET = 1024;


/** The offline model's signature of a thinking text: opaque, deterministic, checked when it comes back. */
export const signThinking = (thinking: string): string => btoa(`agentry-offline-thinking:${fnv1a(thinking)}`);

/** A thinking block sent back: its signature must be the one the offline model gave its text. */
export function thinkingSignatureValid(block: JsonObject): boolean {
  return typeof block.thinking === "string" && typeof block.signature === "string" && block.signature === signThinking(block.thinking);
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
    throw new InvalidRequest("`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size");
  }
  return true;
}
