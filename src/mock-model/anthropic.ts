import type { Conversation } from "./conversation";
import { jsonResponse, type Delivery } from "./delivery";
import { anthropicError, anthropicErrorFor } from "./errors";
import { randomId } from "./ids";
import { splitChunks } from "./plan";
import { readAnthropic } from "./read-anthropic";
import { namedFrame, sseResponse, type Frame } from "./sse";
import { countTokens, type TokenCounts } from "./usage";
import type { Answer, WireApi } from "./wire";

type Block =
  | { type: "text"; text: string; citations: null }
  | { type: "tool_use"; id: string; name: string; input: unknown; caller: { type: "direct" } };

/** Anthropic's usage: `input_tokens` excludes cache reads (and writes), as the real API reports. */
function usageOf(counts: TokenCounts) {
  return {
    input_tokens: counts.input - counts.cacheRead,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: counts.cacheRead,
    cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
    output_tokens: counts.output,
    output_tokens_details: null,
    server_tool_use: null,
    service_tier: "standard",
    inference_geo: null,
    speed: null,
  };
}

function blocksOf(answer: Answer): Block[] {
  if (answer.kind === "text") {
    // A refusal that came before any text has no text block.
    return answer.stop === "refusal" && answer.text === "" ? [] : [{ type: "text", text: answer.text, citations: null }];
  }
  return answer.calls.map((call, index) => ({
    type: "tool_use",
    id: randomId("toolu_"),
    name: call.name,
    // A call cut mid-arguments has no input to parse: its JSON (below) is all there is.
    input: isCutCall(answer, index) ? {} : call.arguments,
    caller: { type: "direct" },
  }));
}

const isCutCall = (answer: Answer, index: number): boolean =>
  answer.kind === "tools" && answer.cutArguments !== undefined && index === answer.calls.length - 1;

function deltasOf(block: Block, answer: Answer, index: number) {
  if (block.type === "tool_use") {
    const json = isCutCall(answer, index) && answer.kind === "tools" ? (answer.cutArguments ?? "") : JSON.stringify(block.input);
    return splitChunks(json).map((partial_json) => ({ type: "input_json_delta", partial_json }));
  }
  return (answer.kind === "text" ? answer.deltas : [block.text]).map((text) => ({ type: "text_delta", text }));
}

/** message_start, ping, one start / deltas / stop per content block, message_delta, message_stop. */
function streamFrames(message: ReturnType<typeof messageOf>, answer: Answer): Frame[] {
  const { content, usage, stop_reason, stop_details } = message;
  const frames = [
    namedFrame("message_start", {
      type: "message_start",
      message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
    }),
    namedFrame("ping", { type: "ping" }),
  ];
  content.forEach((block, index) => {
    const start = block.type === "text" ? { ...block, text: "" } : { ...block, input: {} };
    frames.push(namedFrame("content_block_start", { type: "content_block_start", index, content_block: start }));
    for (const delta of deltasOf(block, answer, index)) {
      frames.push(namedFrame("content_block_delta", { type: "content_block_delta", index, delta }, true));
    }
    frames.push(namedFrame("content_block_stop", { type: "content_block_stop", index }));
  });
  frames.push(
    namedFrame("message_delta", {
      type: "message_delta",
      delta: { stop_reason, stop_sequence: null, stop_details },
      usage: {
        input_tokens: usage.input_tokens,
        cache_creation_input_tokens: usage.cache_creation_input_tokens,
        cache_read_input_tokens: usage.cache_read_input_tokens,
        output_tokens: usage.output_tokens,
        server_tool_use: null,
      },
    }),
    namedFrame("message_stop", { type: "message_stop" }),
  );
  return frames;
}

function messageOf(conversation: Conversation, answer: Answer) {
  return {
    id: randomId("msg_"),
    type: "message",
    role: "assistant",
    model: conversation.model,
    content: blocksOf(answer),
    stop_reason: answer.stop ?? (answer.kind === "tools" ? "tool_use" : "end_turn"),
    stop_sequence: null,
    stop_details: answer.stop === "refusal" ? { type: "refusal", category: null, explanation: null } : null,
    container: null,
    usage: usageOf(countTokens(conversation, answer)),
  };
}

/** The Anthropic Messages API (`POST /v1/messages`), JSON and SSE. */
export const anthropicApi: WireApi = {
  read: readAnthropic,
  invalid: (error) => anthropicError(400, "invalid_request_error", error.message),
  unauthenticated: () => anthropicError(401, "authentication_error", "x-api-key header is required"),
  error: anthropicErrorFor,
  answer(conversation, answer, signal) {
    const headers = { "request-id": randomId("req_") };
    const delivery: Delivery = { slowMs: answer.slowMs, cut: answer.cut, signal, headers };
    const message = messageOf(conversation, answer);
    if (!conversation.stream) return jsonResponse(message, delivery);
    return sseResponse(streamFrames(message, answer), delivery);
  },
};
