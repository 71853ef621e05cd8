import { isObject, parseJson, type JsonObject } from "./values";

/** A `[[tool NAME {json}]]` directive. */
export type ToolDirective = { name: string; arguments: JsonObject };

/** A `[[fail STATUS xN]]` directive, optionally with `retry-after=S` and `should-retry=true|false`. */
export type FailDirective = { status: number; times: number; retryAfter: string | null; shouldRetry: string | null };

/** A `[[stream_error TYPE]]` / `[[error_event TYPE]]` directive: the stream breaks off with the vendor's error frame. */
export type StreamErrorDirective = { type: string; event: boolean };

/** Everything the last user message asks of the offline model. */
export type Directives = {
  /** The message's text outside directives, whitespace collapsed. */
  text: string;
  tools: ToolDirective[];
  parallel: boolean;
  fail: FailDirective | null;
  quota: boolean;
  contextOverflow: boolean;
  /** `[[usage_limits]]`, `[[context_limit]]`, `[[tpm_limit]]`: the vendors' errors of those names (docs/offline-model.md). */
  usageLimits: boolean;
  contextLimit: boolean;
  tpmLimit: boolean;
  streamError: StreamErrorDirective | null;
  slowMs: number;
  words: number | null;
  cut: boolean;
  json: boolean;
  badJson: boolean;
  /** `[[truncate]]` (cut at the request's max tokens: "limit") or `[[truncate N]]` (N words or pieces kept). */
  truncate: "limit" | number | null;
  /** `[[refuse]]`: the model declines. */
  refuse: boolean;
};

const DIRECTIVE = /\[\[([\s\S]*?)\]\]/g;
const TOOL = /^tool\s+([A-Za-z0-9_.-]+)(?:\s+([\s\S]*))?$/;
const FAIL = /^fail\s+(\d{3})\s+x(\d+)(?:\s+retry-after=(\d+(?:\.\d+)?))?(?:\s+should-retry=(true|false))?$/;
const STREAM_ERROR = /^(stream_error|error_event)\s+([a-z_]+)$/;
const SLOW = /^slow\s+(\d+)$/;
const WORDS = /^words\s+(\d+)$/;
const TRUNCATE = /^truncate(?:\s+(\d+))?$/;

export const noDirectives = (text = ""): Directives => ({
  text,
  tools: [],
  parallel: false,
  fail: null,
  quota: false,
  contextOverflow: false,
  usageLimits: false,
  contextLimit: false,
  tpmLimit: false,
  streamError: null,
  slowMs: 0,
  words: null,
  cut: false,
  json: false,
  badJson: false,
  truncate: null,
  refuse: false,
});

/**
 * Reads the directives in double brackets out of a user message. A bracketed text that is
 * not a known directive (or a tool directive whose arguments are not a JSON object) stays
 * part of the text, so a typo shows up in the echo.
 */
export function parseDirectives(message: string): Directives {
  const found = noDirectives();
  const text = message.replace(DIRECTIVE, (whole: string, inner: string) => (apply(found, inner.trim()) ? " " : whole));
  found.text = text.replace(/\s+/g, " ").trim();
  return found;
}

function apply(found: Directives, body: string): boolean {
  const tool = TOOL.exec(body);
  if (tool?.[1] !== undefined) {
    const args = tool[2] === undefined ? {} : parseJson(tool[2]);
    if (!isObject(args)) return false;
    found.tools.push({ name: tool[1], arguments: args });
    return true;
  }
  const fail = FAIL.exec(body);
  if (fail?.[1] !== undefined && fail[2] !== undefined) {
    found.fail = { status: Number(fail[1]), times: Number(fail[2]), retryAfter: fail[3] ?? null, shouldRetry: fail[4] ?? null };
    return true;
  }
  const streamError = STREAM_ERROR.exec(body);
  if (streamError?.[2] !== undefined) {
    found.streamError = { type: streamError[2], event: streamError[1] === "error_event" };
    return true;
  }
  const slow = SLOW.exec(body);
  if (slow?.[1] !== undefined) {
    found.slowMs = Number(slow[1]);
    return true;
  }
  const words = WORDS.exec(body);
  if (words?.[1] !== undefined) {
    found.words = Number(words[1]);
    return true;
  }
  const truncate = TRUNCATE.exec(body);
  if (truncate) {
    found.truncate = truncate[1] === undefined ? "limit" : Number(truncate[1]);
    return true;
  }
  switch (body) {
    case "refuse":
      found.refuse = true;
      return true;
    case "parallel":
      found.parallel = true;
      return true;
    case "quota":
      found.quota = true;
      return true;
    case "context_overflow":
      found.contextOverflow = true;
      return true;
    case "usage_limits":
      found.usageLimits = true;
      return true;
    case "context_limit":
      found.contextLimit = true;
      return true;
    case "tpm_limit":
      found.tpmLimit = true;
      return true;
    case "cut":
      found.cut = true;
      return true;
    case "json":
      found.json = true;
      return true;
    case "badjson":
      found.badJson = true;
      return true;
    default:
      return false;
  }
}
