import type { RawMessageStreamEvent, RefusalStopDetails, StopReason } from "@anthropic-ai/sdk/resources/messages";
import type { Block, Usage } from "../core/messages";
import { count } from "./call-support";
import { boundToolArguments, parseToolArguments } from "./tool-calls";
import type { ModelResponse, ModelStreamEvent } from "./types";

type Part =
  | { kind: "text"; text: string }
  | { kind: "thinking"; text: string; signature: string }
  | { kind: "redacted"; data: string }
  | { kind: "tool"; id: string; name: string; json: string; input: unknown };

const USAGE_KEYS = ["input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"] as const;
type WireUsage = Partial<Record<(typeof USAGE_KEYS)[number], number | null>> & { thinking_tokens?: number };

/** Builds the answer of one Anthropic stream from its events, reporting deltas as they come. */
export class MessageAccumulator {
  readonly #parts = new Map<number, Part>();
  #usage: WireUsage = {};
  #stopReason: StopReason | null = null;
  #stopDetails: RefusalStopDetails | null = null;
  stopped = false;

  constructor(
    private readonly emit: (event: ModelStreamEvent) => void,
    private readonly markToken: () => void,
  ) {}

  add(event: RawMessageStreamEvent): void {
    switch (event.type) {
      case "message_start": {
        const { usage } = event.message;
        this.#usage = { ...pick(usage), thinking_tokens: usage.output_tokens_details?.thinking_tokens };
        return;
      }
      case "content_block_start":
        this.#start(event.index, event.content_block);
        return;
      case "content_block_delta":
        this.#delta(event.index, event.delta);
        return;
      case "message_delta":
        this.#stopReason = event.delta.stop_reason ?? this.#stopReason;
        this.#stopDetails = event.delta.stop_details ?? this.#stopDetails;
        this.#usage = { ...this.#usage, ...pick(event.usage) };
        if (event.usage.output_tokens_details) {
          this.#usage.thinking_tokens = event.usage.output_tokens_details.thinking_tokens;
        }
        return;
      case "message_stop":
        this.stopped = true;
        return;
      case "content_block_stop":
        return;
    }
  }

  #start(index: number, block: StartBlock): void {
    const part = partOf(block);
    if (part) this.#parts.set(index, part);
  }

  #delta(index: number, delta: Extract<RawMessageStreamEvent, { type: "content_block_delta" }>["delta"]): void {
    const part = this.#parts.get(index);
    if (!part) return;
    if (delta.type === "text_delta" && part.kind === "text") {
      part.text += delta.text;
      if (delta.text) this.emit({ type: "text_delta", text: delta.text });
    } else if (delta.type === "thinking_delta" && part.kind === "thinking") {
      part.text += delta.thinking;
      if (delta.thinking) this.emit({ type: "reasoning_delta", text: delta.thinking });
    } else if (delta.type === "signature_delta" && part.kind === "thinking") {
      part.signature += delta.signature;
    } else if (delta.type === "input_json_delta" && part.kind === "tool") {
      part.json += delta.partial_json;
      this.markToken();
    }
  }

  result(): Omit<ModelResponse, "time_to_first_token_ms"> {
    const content = [...this.#parts.entries()].sort(([a], [b]) => a - b).flatMap(([, part]) => toBlock(part));
    const hasToolCall = content.some((b) => b.type === "tool_call");
    return {
      content,
      usage: normalizeUsage(this.#usage),
      stop_reason: stopReason(this.#stopReason, hasToolCall),
      stop_detail: stopDetail(this.#stopReason, this.#stopDetails),
    };
  }
}

type StartBlock = Extract<RawMessageStreamEvent, { type: "content_block_start" }>["content_block"];

function partOf(block: StartBlock): Part | null {
  switch (block.type) {
    case "text":
      return { kind: "text", text: block.text };
    case "thinking":
      return { kind: "thinking", text: block.thinking, signature: block.signature };
    case "redacted_thinking":
      return { kind: "redacted", data: block.data };
    case "tool_use":
      return { kind: "tool", id: block.id, name: block.name, json: "", input: block.input };
    default:
      return null;
  }
}

/** The counts a usage object actually carries (`message_delta` repeats them cumulatively, or null). */
function pick(usage: Partial<Record<(typeof USAGE_KEYS)[number], number | null>>): WireUsage {
  const out: WireUsage = {};
  for (const key of USAGE_KEYS) {
    const value = usage[key];
    if (typeof value === "number") out[key] = value;
  }
  return out;
}

function toBlock(part: Part): Block[] {
  switch (part.kind) {
    case "text":
      // Claude often streams a "\n\n" block before a tool call: nothing to keep (Anthropic refuses it back).
      return part.text.trim() ? [{ type: "text", text: part.text }] : [];
    case "thinking":
      return [{ type: "reasoning", text: part.text, provider: "anthropic", provider_data: { signature: part.signature } }];
    case "redacted":
      return [{ type: "reasoning", text: "", provider: "anthropic", provider_data: { redacted_data: part.data } }];
    case "tool":
      return [
        {
          type: "tool_call",
          tool_call_id: part.id,
          name: part.name,
          arguments: part.json ? parseToolArguments(part.json) : boundToolArguments(part.input ?? {}),
        },
      ];
  }
}

/** Anthropic's `input_tokens` excludes cache reads and writes; ours counts every input token. */
function normalizeUsage(usage: WireUsage): Usage {
  const cacheRead = count(usage.cache_read_input_tokens);
  const cacheWrite = count(usage.cache_creation_input_tokens);
  return {
    input_tokens: count(usage.input_tokens) + cacheRead + cacheWrite,
    output_tokens: count(usage.output_tokens),
    cache_read_tokens: cacheRead,
    cache_write_tokens: cacheWrite,
    reasoning_tokens: count(usage.thinking_tokens),
  };
}

/** Anthropic's `stop_reason`, neutral (docs/providers.md, Stop reasons). */
function stopReason(reason: StopReason | null, hasToolCall: boolean): ModelResponse["stop_reason"] {
  switch (reason) {
    case "tool_use":
      return "tool_calls";
    case "end_turn":
    case "stop_sequence":
      return hasToolCall ? "tool_calls" : "end_turn";
    case "max_tokens":
      return "max_tokens";
    case "model_context_window_exceeded":
      return "context_window";
    case "refusal":
      return "refusal";
    case "pause_turn":
      return "pause";
    case null:
      return hasToolCall ? "tool_calls" : "other";
    default:
      return "other";
  }
}

/** `stop_reason: refusal` (with the refusal's category and explanation when Anthropic gave them), or the reason as sent. */
function stopDetail(reason: StopReason | null, details: RefusalStopDetails | null): string {
  const explained = [details?.category, details?.explanation].filter((part): part is string => Boolean(part));
  return `Anthropic stop_reason ${reason ?? "null"}${explained.length > 0 ? ` (${explained.join(": ")})` : ""}`;
}
