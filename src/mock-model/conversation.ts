import { parseDirectives, type Directives } from "./directives";
import type { JsonObject } from "./values";

/** One item of a transcript, whatever the provider's wire format. */
export type Entry =
  | { kind: "user"; text: string }
  | { kind: "assistant" }
  | { kind: "call"; id: string; name: string }
  | { kind: "result"; id: string; output: string };

/** What a provider-specific reader takes out of a request body. */
export type RequestView = {
  /** The request body, for the fields a response echoes back (instructions, tools …). */
  raw: JsonObject;
  model: string;
  stream: boolean;
  entries: Entry[];
  systemText: string;
  /** The request marks its system prompt for prompt caching. */
  cacheMarked: boolean;
  /** The JSON Schema the answer must follow, when the request carries one. */
  schema: JsonObject | null;
  /** JSON mode without a schema (Chat `response_format: { type: "json_object" }`). */
  jsonMode: boolean;
  /** Chat `stream_options.include_usage`. */
  includeUsage: boolean;
};

/** A tool result that follows the last user text message. */
export type ToolResult = { callId: string; name: string | null; output: string };

/** The request as the offline model reasons about it. */
export type Conversation = RequestView & {
  directives: Directives;
  /** Tool results after the last user text message, in transcript order. */
  toolResults: ToolResult[];
  hasAssistant: boolean;
  /** Characters of the request body's JSON text. */
  bodyLength: number;
  /** `x-agentry-attempt`, 1-based; 1 when absent or not a positive integer. */
  attempt: number;
};

/** Reads the attempt number Agentry sends with every provider request. */
export function attemptOf(request: Request): number {
  const raw = request.headers.get("x-agentry-attempt");
  const attempt = raw === null ? NaN : Number(raw);
  return Number.isInteger(attempt) && attempt >= 1 ? attempt : 1;
}

/** Finds the last user text message and the tool results after it. */
export function summarize(view: RequestView, bodyLength: number, attempt: number): Conversation {
  const { entries } = view;
  const last = entries.findLastIndex((entry) => entry.kind === "user");
  const names = new Map<string, string>();
  for (const entry of entries) if (entry.kind === "call") names.set(entry.id, entry.name);
  const toolResults: ToolResult[] = [];
  for (const entry of entries.slice(last + 1)) {
    if (entry.kind === "result") {
      toolResults.push({ callId: entry.id, name: names.get(entry.id) ?? null, output: entry.output });
    }
  }
  const lastUser = entries[last];
  return {
    ...view,
    directives: parseDirectives(lastUser?.kind === "user" ? lastUser.text : ""),
    toolResults,
    hasAssistant: entries.some((entry) => entry.kind === "assistant" || entry.kind === "call"),
    bodyLength,
    attempt,
  };
}

/** Thrown by a reader when the body is not a valid request; answered with the provider's 400. */
export class InvalidRequest extends Error {
  constructor(
    message: string,
    readonly param: string | null = null,
    /** The vendor's error `code` (OpenAI), when it sends one. */
    readonly code: string | null = null,
  ) {
    super(message);
    this.name = "InvalidRequest";
  }
}
