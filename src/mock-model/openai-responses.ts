import { isReasoningModel } from "../providers/openai-reasoning";
import type { Conversation } from "./conversation";
import { jsonResponse, type Delivery } from "./delivery";
import { openaiError, openaiErrorFor } from "./errors";
import { randomId, unixNow } from "./ids";
import { reasoningItem, thoughtOf, type ReasoningItem } from "./openai-reasoning";
import { checkResponsesRequest, ResponsesViolation } from "./openai-responses-rules";
import { openaiAnswer, openaiInvalid, openaiUnauthenticated } from "./openai-shared";
import { splitChunks, splitWords } from "./plan";
import { responsesStreamError } from "./stream-errors";
import { readResponses } from "./read-openai";
import { namedFrame, sseResponse, type Frame } from "./sse";
import { countTokens } from "./usage";
import { isObject } from "./values";
import type { Answer, WireApi } from "./wire";

type OutputText = { type: "output_text"; annotations: []; logprobs: []; text: string };
type Refusal = { type: "refusal"; refusal: string };
type MessageItem = { id: string; type: "message"; status: string; role: "assistant"; content: (OutputText | Refusal)[] };
type CallItem = { id: string; type: "function_call"; status: string; arguments: string; call_id: string; name: string };
type Item = MessageItem | CallItem | ReasoningItem;
/** Makes one stream event, numbering it (`sequence_number`) in the order of the calls. */
type EventFrame = (type: string, data: object, delta?: boolean) => Frame;

const outputText = (text: string): OutputText => ({ type: "output_text", annotations: [], logprobs: [], text });

/** The answer's output items; a reasoning model thinks first (a reasoning item before them). */
function itemsOf(conversation: Conversation, answer: Answer): Item[] {
  const items = answerItems(answer);
  if (!isReasoningModel(conversation.model)) return items;
  // An answer cut before its first token leaves the reasoning alone: the budget went on thinking.
  return [reasoningItem(conversation.raw, thoughtOf(answer), items[0]?.id ?? ""), ...items];
}

/** The answer's own items; an item cut at `max_output_tokens` is `incomplete` (a message cut before its first token is not there). */
function answerItems(answer: Answer): (MessageItem | CallItem)[] {
  const cut = answer.stop === "max_tokens";
  if (answer.kind === "text") {
    if (cut && answer.text === "") return [];
    const id = randomId("msg_", 32);
    const part = answer.stop === "refusal" ? { type: "refusal" as const, refusal: answer.text } : outputText(answer.text);
    return [{ id, type: "message", status: cut ? "incomplete" : "completed", role: "assistant", content: [part] }];
  }
  return answer.calls.map((call, index): CallItem => {
    const last = index === answer.calls.length - 1 && answer.cutArguments !== undefined;
    return {
      id: randomId("fc_", 32),
      type: "function_call",
      status: last ? "incomplete" : "completed",
      arguments: last ? (answer.cutArguments ?? "") : JSON.stringify(call.arguments),
      call_id: randomId("call_"),
      name: call.name,
    };
  });
}

/** The Response object; `usage.input_tokens` includes the cached tokens, as OpenAI reports them. */
function responseOf(conversation: Conversation, answer: Answer, output: Item[]) {
  const { raw } = conversation;
  const counts = countTokens(conversation, answer);
  const reasons = isReasoningModel(conversation.model);
  // Reasoning tokens are part of the output tokens, as OpenAI reports them.
  const reasoningTokens = reasons ? Math.ceil(thoughtOf(answer).length / 4) : 0;
  const outputTokens = counts.output + reasoningTokens;
  const asked = isObject(raw.reasoning) ? raw.reasoning : {};
  const now = unixNow();
  const incomplete = answer.stop === "max_tokens";
  return {
    id: randomId("resp_", 32),
    object: "response",
    created_at: now,
    status: incomplete ? "incomplete" : "completed",
    background: false,
    completed_at: incomplete ? null : now,
    error: null,
    incomplete_details: incomplete ? { reason: "max_output_tokens" } : null,
    instructions: raw.instructions ?? null,
    max_output_tokens: raw.max_output_tokens ?? null,
    model: conversation.model,
    output,
    parallel_tool_calls: raw.parallel_tool_calls ?? true,
    previous_response_id: raw.previous_response_id ?? null,
    prompt_cache_key: raw.prompt_cache_key ?? null,
    reasoning: reasons ? { effort: asked.effort ?? "medium", summary: asked.summary ?? null } : { effort: null, summary: null },
    store: raw.store ?? true,
    temperature: raw.temperature ?? 1,
    text: raw.text ?? { format: { type: "text" } },
    tool_choice: raw.tool_choice ?? "auto",
    tools: raw.tools ?? [],
    top_p: raw.top_p ?? 1,
    truncation: "disabled",
    usage: {
      input_tokens: counts.input,
      input_tokens_details: { cached_tokens: counts.cacheRead, cache_write_tokens: 0 },
      output_tokens: outputTokens,
      output_tokens_details: { reasoning_tokens: reasoningTokens },
      total_tokens: counts.input + outputTokens,
    },
    user: null,
    metadata: raw.metadata ?? {},
  };
}

/** The events of one output item: added, its content or arguments in deltas, done. */
function itemEvents(item: Item, output_index: number, answer: Answer, event: EventFrame): Frame[] {
  const item_id = item.id;
  if (item.type === "reasoning") return reasoningEvents(item, output_index, event);
  if (item.type === "function_call") {
    return [
      event("response.output_item.added", { output_index, item: { ...item, status: "in_progress", arguments: "" } }),
      ...splitChunks(item.arguments).map((delta) =>
        event("response.function_call_arguments.delta", { item_id, output_index, delta }, true),
      ),
      event("response.function_call_arguments.done", {
        item_id,
        output_index,
        name: item.name,
        arguments: item.arguments,
      }),
      event("response.output_item.done", { output_index, item }),
    ];
  }
  const content = item.content[0];
  const part = { item_id, output_index, content_index: 0 };
  const deltas = (text: string) => (answer.kind === "text" ? answer.deltas : [text]);
  // Events are numbered as they are made: made in stream order.
  const frames = [event("response.output_item.added", { output_index, item: { ...item, status: "in_progress", content: [] } })];
  if (content?.type === "refusal") {
    const { refusal } = content;
    frames.push(
      event("response.content_part.added", { ...part, part: { type: "refusal", refusal: "" } }),
      ...deltas(refusal).map((delta) => event("response.refusal.delta", { ...part, delta }, true)),
      event("response.refusal.done", { ...part, refusal }),
      event("response.content_part.done", { ...part, part: content }),
    );
  } else {
    const text = content?.text ?? "";
    frames.push(
      event("response.content_part.added", { ...part, part: outputText("") }),
      ...deltas(text).map((delta) => event("response.output_text.delta", { ...part, delta, logprobs: [] }, true)),
      event("response.output_text.done", { ...part, text, logprobs: [] }),
      event("response.content_part.done", { ...part, part: outputText(text) }),
    );
  }
  return [...frames, event("response.output_item.done", { output_index, item })];
}

/** A reasoning item's events: added (no summary yet), each summary part in deltas, done. */
function reasoningEvents(item: ReasoningItem, output_index: number, event: EventFrame): Frame[] {
  const { encrypted_content: _sealed, ...opened } = item;
  return [
    event("response.output_item.added", { output_index, item: { ...opened, summary: [] } }),
    ...item.summary.flatMap(({ text }, summary_index) => {
      const part = { item_id: item.id, output_index, summary_index };
      return [
        event("response.reasoning_summary_part.added", { ...part, part: { type: "summary_text", text: "" } }),
        ...splitWords(text).map((delta) => event("response.reasoning_summary_text.delta", { ...part, delta }, true)),
        event("response.reasoning_summary_text.done", { ...part, text }),
        event("response.reasoning_summary_part.done", { ...part, part: { type: "summary_text", text } }),
      ];
    }),
    event("response.output_item.done", { output_index, item }),
  ];
}

function streamFrames(response: ReturnType<typeof responseOf>, answer: Answer): Frame[] {
  let sequence_number = 0;
  const event: EventFrame = (type, data, delta = false) => namedFrame(type, { type, sequence_number: sequence_number++, ...data }, delta);
  const pending = { ...response, status: "in_progress", completed_at: null, output: [], usage: null };
  return [
    event("response.created", { response: pending }),
    event("response.in_progress", { response: pending }),
    ...response.output.flatMap((item, index) => itemEvents(item, index, answer, event)),
    // A response cut at max_output_tokens ends with `response.incomplete`, not `response.completed`.
    response.status === "incomplete" ? event("response.incomplete", { response }) : event("response.completed", { response }),
  ];
}

/** The OpenAI Responses API (`POST /v1/responses`), JSON and SSE. */
export const responsesApi: WireApi = {
  read(body) {
    const view = readResponses(body);
    checkResponsesRequest(view.raw, view.model);
    return view;
  },
  invalid: (error) =>
    error instanceof ResponsesViolation && error.status !== 400
      ? openaiError(error.status, { message: error.message, type: "invalid_request_error", param: error.param, code: error.code })
      : openaiInvalid(error),
  unauthenticated: openaiUnauthenticated,
  error: (error) => openaiErrorFor(error, "responses"),
  answer(conversation, planned, signal) {
    const answer = openaiAnswer(planned);
    const headers = { "x-request-id": randomId("req_", 32) };
    const response = responseOf(conversation, answer, itemsOf(conversation, answer));
    const failFrame = answer.streamError && responsesStreamError(answer.streamError, response);
    const delivery: Delivery = { slowMs: answer.slowMs, cut: answer.cut, failFrame, signal, headers };
    if (!conversation.stream) return jsonResponse(response, delivery);
    return sseResponse(streamFrames(response, answer), delivery);
  },
};
