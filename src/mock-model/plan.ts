import { badValue } from "./bad-json";
import type { Conversation, ToolResult } from "./conversation";
import type { Directives, StreamErrorDirective, ToolDirective } from "./directives";
import { obeyToolChoice, toolChoiceOf } from "./tool-choice";
import { sampleValue } from "./sample-json";
import type { JsonObject } from "./values";

/** An error answer; each wire format renders it as that provider's real error. */
export type ErrorCase =
  | { kind: "status"; status: number; retryAfter: string | null; shouldRetry: string | null }
  | { kind: "quota" }
  | { kind: "context_overflow" }
  | { kind: "usage_limits" }
  | { kind: "context_limit" }
  | { kind: "tpm_limit" };

/**
 * How an answer ends when it does not end as an answer: `max_tokens` (`[[truncate]]`, cut at the
 * request's output limit) or `refusal` (`[[refuse]]`, the model declines).
 */
export type Stop = "max_tokens" | "refusal";

/** What the offline model answers to one request, before it is put on the wire. */
export type Plan =
  | { kind: "error"; error: ErrorCase }
  /** `stopSequence`: the request's stop sequence the answer reached (its text ends before it). */
  | {
      kind: "text";
      text: string;
      deltas: string[];
      slowMs: number;
      cut: boolean;
      streamError: StreamErrorDirective | null;
      stop?: Stop;
      stopSequence?: string;
    }
  /** `cutArguments`: with `stop: "max_tokens"`, the last call's arguments JSON as far as it got. */
  | {
      kind: "tools";
      calls: ToolDirective[];
      slowMs: number;
      cut: boolean;
      streamError: StreamErrorDirective | null;
      stop?: Stop;
      cutArguments?: string;
    };

/** What an OpenAI model says when it declines (Anthropic adds no refusal message). */
export const REFUSAL_TEXT = "I'm sorry, but I can't help with that.";

const LOREM = (
  "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore " + "magna aliqua"
).split(" ");

/** Decides the answer from the last user message's directives and the tool results after it. */
export function decide(conversation: Conversation): Plan {
  const { attempt, toolResults } = conversation;
  // The calls the model makes obey the request's tool choice; its answer reports the results it got.
  const chosen = obeyToolChoice(conversation.raw, conversation.directives.tools, toolResults.length);
  const serial = toolChoiceOf(conversation.raw).serial;
  const d = { ...conversation.directives, parallel: conversation.directives.parallel && !serial };
  if (d.quota) return { kind: "error", error: { kind: "quota" } };
  if (d.usageLimits) return { kind: "error", error: { kind: "usage_limits" } };
  if (d.contextOverflow) return { kind: "error", error: { kind: "context_overflow" } };
  if (d.contextLimit) return { kind: "error", error: { kind: "context_limit" } };
  if (d.tpmLimit) return { kind: "error", error: { kind: "tpm_limit" } };
  if (d.fail !== null && attempt <= d.fail.times) {
    const { status, retryAfter, shouldRetry } = d.fail;
    return { kind: "error", error: { kind: "status", status, retryAfter, shouldRetry } };
  }
  const delivery = { slowMs: d.slowMs, cut: d.cut && attempt === 1, streamError: attempt === 1 ? d.streamError : null };
  // Anthropic's `max_tokens: 0` fills the prompt cache and generates nothing.
  if (maxTokensOf(conversation.raw) === 0) return { kind: "text", text: "", deltas: [], ...delivery, stop: "max_tokens" };
  const answer = finalAnswer(conversation, d);
  // A refusal streams the first half of the answer before the model stops (Anthropic's classifiers cut mid-answer).
  if (d.refuse) return { kind: "text", ...firstPieces(answer.deltas, Math.floor(answer.deltas.length / 2)), ...delivery, stop: "refusal" };
  const done = toolResults.length;
  if (done < chosen.length) {
    const calls = d.parallel ? chosen.slice(done) : chosen.slice(done, done + 1);
    if (d.truncate === null) return { kind: "tools", calls, ...delivery };
    const json = JSON.stringify(calls[calls.length - 1]?.arguments ?? {});
    return { kind: "tools", calls, ...delivery, stop: "max_tokens", cutArguments: json.slice(0, Math.max(1, Math.floor(json.length / 2))) };
  }
  if (d.truncate === null) return { kind: "text", ...stopAt(answer, stopSequencesOf(conversation.raw)), ...delivery };
  const kept = keptPieces(answer.deltas, d.truncate, maxTokensOf(conversation.raw));
  return { kind: "text", ...firstPieces(answer.deltas, kept), ...delivery, stop: "max_tokens" };
}

/** The request's stop sequences: Anthropic's `stop_sequences`, Chat Completions' `stop` (a string or a list). */
function stopSequencesOf(raw: JsonObject): string[] {
  const given = raw.stop_sequences ?? raw.stop;
  const list = typeof given === "string" ? [given] : Array.isArray(given) ? given : [];
  return list.filter((item): item is string => typeof item === "string" && item !== "");
}

/** An answer that ends where its first stop sequence appears, as a model's does (the sequence itself is not in the text). */
function stopAt(
  answer: { text: string; deltas: string[] },
  sequences: string[],
): { text: string; deltas: string[]; stopSequence?: string } {
  let first: { at: number; sequence: string } | null = null;
  for (const sequence of sequences) {
    const at = answer.text.indexOf(sequence);
    if (at >= 0 && (first === null || at < first.at)) first = { at, sequence };
  }
  if (first === null) return answer;
  const text = answer.text.slice(0, first.at);
  return { text, deltas: splitWords(text), stopSequence: first.sequence };
}

/** The final answer's text and its stream pieces: JSON in chunks, text word by word. */
function finalAnswer(conversation: Conversation, d: Directives): { text: string; deltas: string[] } {
  const json = jsonAnswer(conversation);
  if (json !== null) return { text: json, deltas: splitChunks(json) };
  const text = textAnswer({ ...d, tools: d.tools.slice(0, conversation.toolResults.length) }, conversation.toolResults);
  return { text, deltas: splitWords(text) };
}

const firstPieces = (deltas: string[], count: number) => {
  const kept = deltas.slice(0, count);
  return { text: kept.join(""), deltas: kept };
};

/**
 * How many pieces `[[truncate]]` keeps: N with `[[truncate N]]`; else as many as fit in the
 * request's max tokens (4 characters a token, as usage counts them), or half of them when the
 * whole answer fits.
 */
function keptPieces(deltas: string[], truncate: "limit" | number, maxTokens: number | null): number {
  if (truncate !== "limit") return truncate;
  const limit = maxTokens === null ? Infinity : maxTokens * 4;
  let characters = 0;
  let kept = 0;
  for (const piece of deltas) {
    if (characters + piece.length > limit) break;
    characters += piece.length;
    kept += 1;
  }
  return kept < deltas.length ? kept : Math.floor(deltas.length / 2);
}

/** The request's output limit, in whichever field its wire format names it. */
function maxTokensOf(raw: JsonObject): number | null {
  for (const key of ["max_completion_tokens", "max_output_tokens", "max_tokens"]) {
    const value = raw[key];
    if (typeof value === "number") return value;
  }
  return null;
}

function jsonAnswer({ directives: d, schema, jsonMode }: Conversation): string | null {
  if (d.badJson) return JSON.stringify(badValue(schema));
  if (schema !== null) return JSON.stringify(sampleValue(schema));
  if (jsonMode || d.json) return "{}";
  return null;
}

function textAnswer(d: Directives, toolResults: ToolResult[]): string {
  if (d.words !== null) return Array.from({ length: d.words }, (_, i) => LOREM[i % LOREM.length]).join(" ");
  const said = d.text === "" ? [] : [`You said: ${d.text}`];
  if (d.tools.length > 0) return [...said, ...returnedLines(d.tools, toolResults)].join("\n");
  return said[0] ?? "OK";
}

/**
 * One `NAME returned: <result>` line per tool directive, in directive order. Each result is
 * matched to its call by the tool name its call id had in the transcript (parallel results may
 * come back in any order), falling back to transcript order.
 */
function returnedLines(tools: ToolDirective[], results: ToolResult[]): string[] {
  const unused = [...results];
  return tools.map((tool) => {
    let index = unused.findIndex((result) => result.name === tool.name);
    if (index < 0) index = unused.findIndex((result) => result.name === null);
    const [result] = unused.splice(Math.max(index, 0), 1);
    return `${tool.name} returned: ${result?.output ?? ""}`;
  });
}

/** Splits text into one piece per word, each keeping the whitespace after it. */
export function splitWords(text: string): string[] {
  return text.match(/\s*\S+\s*|\s+/g) ?? [];
}

/** Splits text into pieces of at most `size` characters (JSON answers, tool arguments). */
export function splitChunks(text: string, size = 16): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces;
}
