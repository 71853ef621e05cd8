import { badValue } from "./bad-json";
import type { Conversation, ToolResult } from "./conversation";
import type { ToolDirective } from "./directives";
import { sampleValue } from "./sample-json";

/** An error answer; each wire format renders it as that provider's real error. */
export type ErrorCase =
  | { kind: "status"; status: number; retryAfter: string | null }
  | { kind: "quota" }
  | { kind: "context_overflow" };

/** What the offline model answers to one request, before it is put on the wire. */
export type Plan =
  | { kind: "error"; error: ErrorCase }
  | { kind: "text"; text: string; deltas: string[]; slowMs: number; cut: boolean }
  | { kind: "tools"; calls: ToolDirective[]; slowMs: number; cut: boolean };

const LOREM = (
  "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore " +
  "magna aliqua"
).split(" ");

/** Decides the answer from the last user message's directives and the tool results after it. */
export function decide(conversation: Conversation): Plan {
  const { directives: d, attempt, toolResults } = conversation;
  if (d.quota) return { kind: "error", error: { kind: "quota" } };
  if (d.contextOverflow) return { kind: "error", error: { kind: "context_overflow" } };
  if (d.fail !== null && attempt <= d.fail.times) {
    return { kind: "error", error: { kind: "status", status: d.fail.status, retryAfter: d.fail.retryAfter } };
  }
  const delivery = { slowMs: d.slowMs, cut: d.cut && attempt === 1 };
  const done = toolResults.length;
  if (done < d.tools.length) {
    const calls = d.parallel ? d.tools.slice(done) : d.tools.slice(done, done + 1);
    return { kind: "tools", calls, ...delivery };
  }
  const json = jsonAnswer(conversation);
  if (json !== null) return { kind: "text", text: json, deltas: splitChunks(json), ...delivery };
  const text = textAnswer(conversation);
  return { kind: "text", text, deltas: splitWords(text), ...delivery };
}

function jsonAnswer({ directives: d, schema, jsonMode }: Conversation): string | null {
  if (d.badJson) return JSON.stringify(badValue(schema));
  if (schema !== null) return JSON.stringify(sampleValue(schema));
  if (jsonMode || d.json) return "{}";
  return null;
}

function textAnswer({ directives: d, toolResults }: Conversation): string {
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
