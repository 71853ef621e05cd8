import type { Response, ResponseOutputItem, ResponseStreamEvent, ResponseUsage } from "openai/resources/responses/responses";
import type { Block, Usage } from "../core/messages";
import { count } from "./call-support";
import { parseToolArguments } from "./tool-calls";
import type { ModelResponse } from "./types";

/** What a stream event adds to the answer as it streams: text, reasoning, or a tool call's arguments. */
export type Delta = { kind: "text_delta" | "reasoning_delta"; text: string } | { kind: "tool"; text: "" };

/** The delta a Responses stream event carries, or null for events that carry none. */
export function deltaOf(event: ResponseStreamEvent): Delta | null {
  switch (event.type) {
    case "response.output_text.delta":
    case "response.refusal.delta":
      return { kind: "text_delta", text: event.delta };
    case "response.reasoning_summary_text.delta":
    case "response.reasoning_text.delta":
      return { kind: "reasoning_delta", text: event.delta };
    case "response.function_call_arguments.delta":
      return { kind: "tool", text: "" };
    default:
      return null;
  }
}

/**
 * A Responses output item as neutral blocks (items of other tools are dropped). Each keeps
 * the item's id (and a message's `phase`) in `provider_data`: a reasoning item goes back only
 * before the very item that followed it (src/providers/openai-responses-input.ts).
 */
export function toBlocks(item: ResponseOutputItem): Block[] {
  switch (item.type) {
    case "message": {
      const provider_data = { id: item.id, ...(item.phase ? { phase: item.phase } : {}) };
      return item.content.flatMap((part): Block[] => {
        const text = part.type === "output_text" ? part.text : part.refusal;
        return text ? [{ type: "text", text, ...(item.id ? { provider_data } : {}) }] : [];
      });
    }
    case "function_call":
      return [
        {
          type: "tool_call",
          tool_call_id: item.call_id,
          name: item.name,
          arguments: parseToolArguments(item.arguments),
          ...(item.id ? { provider_data: { id: item.id } } : {}),
        },
      ];
    case "reasoning": {
      const summary = item.summary.map((s) => s.text);
      const text = summary.length > 0 ? summary.join("\n\n") : (item.content ?? []).map((c) => c.text).join("\n\n");
      return [
        {
          type: "reasoning",
          text,
          provider: "openai",
          provider_data: {
            id: item.id,
            summary,
            ...(item.encrypted_content ? { encrypted_content: item.encrypted_content } : {}),
          },
        },
      ];
    }
    default:
      return [];
  }
}

/** Normalized usage: OpenAI's `cached_tokens` (and cache writes) are already part of `input_tokens`. */
export function normalizeUsage(usage: ResponseUsage | undefined): Usage {
  return {
    input_tokens: count(usage?.input_tokens),
    output_tokens: count(usage?.output_tokens),
    cache_read_tokens: count(usage?.input_tokens_details?.cached_tokens),
    cache_write_tokens: count(usage?.input_tokens_details?.cache_write_tokens),
    reasoning_tokens: count(usage?.output_tokens_details?.reasoning_tokens),
  };
}

/**
 * The neutral stop reason of a finished response (docs/providers.md, Stop reasons): `status:
 * "incomplete"` by its `incomplete_details.reason`, then a `refusal` content part in an output
 * message, then tool calls or the end of the turn.
 */
export function stopReason(response: Response, content: Block[]): Pick<ModelResponse, "stop_reason" | "stop_detail"> {
  if (response.status === "incomplete") {
    const reason = response.incomplete_details?.reason ?? null;
    const stop = reason === "max_output_tokens" ? "max_tokens" : reason === "content_filter" ? "refusal" : "other";
    return { stop_reason: stop, stop_detail: `Responses status incomplete (${reason ?? "no reason given"})` };
  }
  const refusal = response.output.flatMap((item) =>
    item.type === "message" ? item.content.flatMap((part) => (part.type === "refusal" ? [part.refusal] : [])) : [],
  );
  if (refusal.length > 0) return { stop_reason: "refusal", stop_detail: `Responses refusal: ${refusal.join(" ")}` };
  const stop = content.some((b) => b.type === "tool_call") ? "tool_calls" : "end_turn";
  return { stop_reason: stop, stop_detail: `Responses status ${response.status ?? "completed"}` };
}
