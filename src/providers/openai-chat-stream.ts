import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import type { CompletionUsage } from "openai/resources/completions";
import type { Block, Usage } from "../core/messages";
import { count } from "./call-support";
import { parseToolArguments } from "./tool-calls";
import type { ModelResponse, ModelStreamEvent } from "./types";

type Finish = ChatCompletionChunk.Choice["finish_reason"];
type PendingCall = { id: string; name: string; json: string };

/** Builds the answer of one Chat Completions stream from its chunks, reporting deltas as they come. */
export class ChatAccumulator {
  #text = "";
  #refusal = "";
  #reasoning = "";
  readonly #calls = new Map<number, PendingCall>();
  #usage: CompletionUsage | null = null;
  finish: Finish = null;

  constructor(
    private readonly emit: (event: ModelStreamEvent) => void,
    private readonly markToken: () => void,
  ) {}

  add(chunk: ChatCompletionChunk): void {
    if (chunk.usage) this.#usage = chunk.usage;
    const choice = chunk.choices?.find((c) => c.index === 0);
    if (!choice) return;
    const { delta } = choice;
    if (delta.content) {
      this.#text += delta.content;
      this.emit({ type: "text_delta", text: delta.content });
    }
    if (delta.refusal) {
      // A refusal streams in place of the answer's text; it is what the model said.
      this.#refusal += delta.refusal;
      this.emit({ type: "text_delta", text: delta.refusal });
    }
    const reasoning = reasoningOf(delta);
    if (reasoning) {
      this.#reasoning += reasoning;
      this.emit({ type: "reasoning_delta", text: reasoning });
    }
    for (const call of delta.tool_calls ?? []) {
      const pending = this.#calls.get(call.index) ?? { id: "", name: "", json: "" };
      if (call.id) pending.id = call.id;
      if (call.function?.name) pending.name += call.function.name;
      if (call.function?.arguments) pending.json += call.function.arguments;
      this.#calls.set(call.index, pending);
      this.markToken();
    }
    if (choice.finish_reason) this.finish = choice.finish_reason;
  }

  result(): Omit<ModelResponse, "time_to_first_token_ms"> {
    const content: Block[] = [];
    if (this.#reasoning) content.push({ type: "reasoning", text: this.#reasoning, provider: "openai-chat" });
    if (this.#text) content.push({ type: "text", text: this.#text });
    if (this.#refusal) content.push({ type: "text", text: this.#refusal });
    for (const [, call] of [...this.#calls.entries()].sort(([a], [b]) => a - b)) {
      content.push({
        type: "tool_call",
        // Some compatible endpoints send no id; a fresh one keeps ids unique within the session.
        tool_call_id: call.id || `call_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`,
        name: call.name,
        arguments: parseToolArguments(call.json),
      });
    }
    const refused = this.#refusal !== "";
    return {
      content,
      usage: normalizeUsage(this.#usage),
      stop_reason: refused ? "refusal" : stopReason(this.finish, this.#calls.size > 0),
      stop_detail: refused ? `Chat Completions refusal: ${this.#refusal}` : `Chat Completions finish_reason ${this.finish ?? "null"}`,
    };
  }
}

/** Compatible endpoints stream reasoning as `reasoning_content` (DeepSeek, vLLM) or `reasoning` (OpenRouter). */
function reasoningOf(delta: ChatCompletionChunk.Choice.Delta): string {
  const value = "reasoning_content" in delta ? delta.reasoning_content : "reasoning" in delta ? delta.reasoning : null;
  return typeof value === "string" ? value : "";
}

/** `cached_tokens` is already part of `prompt_tokens`. */
function normalizeUsage(usage: CompletionUsage | null): Usage {
  return {
    input_tokens: count(usage?.prompt_tokens),
    output_tokens: count(usage?.completion_tokens),
    cache_read_tokens: count(usage?.prompt_tokens_details?.cached_tokens),
    cache_write_tokens: count(usage?.prompt_tokens_details?.cache_write_tokens),
    reasoning_tokens: count(usage?.completion_tokens_details?.reasoning_tokens),
  };
}

/** Chat's `finish_reason`, neutral (docs/providers.md, Stop reasons); `content_filter` is the provider's filter declining. */
function stopReason(finish: Finish, hasToolCall: boolean): ModelResponse["stop_reason"] {
  switch (finish) {
    case "tool_calls":
    case "function_call":
      return "tool_calls";
    case "stop":
      return hasToolCall ? "tool_calls" : "end_turn";
    case "length":
      return "max_tokens";
    case "content_filter":
      return "refusal";
    default:
      return "other";
  }
}
