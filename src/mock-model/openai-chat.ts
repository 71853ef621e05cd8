import type { Conversation } from "./conversation";
import { jsonResponse, type Delivery } from "./delivery";
import { openaiErrorFor } from "./errors";
import { randomId, unixNow } from "./ids";
import { openaiAnswer, openaiInvalid, openaiUnauthenticated } from "./openai-shared";
import { splitChunks } from "./plan";
import { chatStreamError } from "./stream-errors";
import { readChat } from "./read-openai";
import { dataFrame, sseResponse, type Frame } from "./sse";
import { countTokens, type TokenCounts } from "./usage";
import type { Answer, WireApi } from "./wire";

type ToolCall = { id: string; type: "function"; function: { name: string; arguments: string } };

const FINGERPRINT = "fp_mock";

/** Chat usage: `prompt_tokens` includes the cached tokens, as OpenAI reports them. */
const usageOf = (counts: TokenCounts) => ({
  prompt_tokens: counts.input,
  completion_tokens: counts.output,
  total_tokens: counts.input + counts.output,
  prompt_tokens_details: { cached_tokens: counts.cacheRead, audio_tokens: 0 },
  completion_tokens_details: {
    reasoning_tokens: 0,
    audio_tokens: 0,
    accepted_prediction_tokens: 0,
    rejected_prediction_tokens: 0,
  },
});

/** The answer's tool calls; with `[[truncate]]` the last one's arguments stop mid-JSON. */
const toolCallsOf = (answer: Answer): ToolCall[] =>
  answer.kind === "tools"
    ? answer.calls.map((call, index) => ({
        id: randomId("call_"),
        type: "function",
        function: {
          name: call.name,
          arguments:
            index === answer.calls.length - 1 && answer.cutArguments !== undefined ? answer.cutArguments : JSON.stringify(call.arguments),
        },
      }))
    : [];

/** `length` when cut at the request's max tokens; a refusal finishes with `stop`. */
const finishReasonOf = (answer: Answer): string =>
  answer.stop === "max_tokens" ? "length" : answer.kind === "tools" ? "tool_calls" : "stop";

const isRefusal = (answer: Answer): boolean => answer.stop === "refusal";

function completionOf(conversation: Conversation, answer: Answer, toolCalls: ToolCall[]) {
  return {
    id: randomId("chatcmpl-", 29),
    object: "chat.completion",
    created: unixNow(),
    model: conversation.model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: answer.kind === "text" && !isRefusal(answer) ? answer.text : null,
          refusal: answer.kind === "text" && isRefusal(answer) ? answer.text : null,
          annotations: [],
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: finishReasonOf(answer),
      },
    ],
    usage: usageOf(countTokens(conversation, answer)),
    service_tier: "default",
    system_fingerprint: FINGERPRINT,
  };
}

/** Role chunk, one chunk per word or argument piece, the finish chunk, the usage chunk when asked, `[DONE]`. */
function streamFrames(conversation: Conversation, answer: Answer, toolCalls: ToolCall[]): Frame[] {
  const completion = completionOf(conversation, answer, toolCalls);
  const { id, created, model, usage } = completion;
  const finish_reason = completion.choices[0]?.finish_reason ?? "stop";
  const withUsage = conversation.includeUsage ? { usage: null } : {};
  const chunk = (delta: object, finish: string | null = null, isDelta = false) =>
    dataFrame(
      {
        id,
        object: "chat.completion.chunk",
        created,
        model,
        service_tier: "default",
        system_fingerprint: FINGERPRINT,
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
        ...withUsage,
      },
      isDelta,
    );
  // A refusal streams in `refusal` deltas, with no content.
  const refusal = isRefusal(answer);
  const frames = [chunk({ role: "assistant", content: answer.kind === "text" && !refusal ? "" : null, refusal: refusal ? "" : null })];
  if (answer.kind === "text") {
    for (const piece of answer.deltas) frames.push(chunk(refusal ? { refusal: piece } : { content: piece }, null, true));
  }
  toolCalls.forEach((call, index) => {
    const opening = { index, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } };
    frames.push(chunk({ tool_calls: [opening] }));
    for (const piece of splitChunks(call.function.arguments)) {
      frames.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }, null, true));
    }
  });
  frames.push(chunk({}, finish_reason));
  if (conversation.includeUsage) {
    const last = { id, object: "chat.completion.chunk", created, model, system_fingerprint: FINGERPRINT };
    frames.push(dataFrame({ ...last, choices: [], usage }));
  }
  frames.push(dataFrame("[DONE]"));
  return frames;
}

/** The OpenAI Chat Completions API (`POST /v1/chat/completions`), JSON and SSE. */
export const chatApi: WireApi = {
  read: readChat,
  invalid: openaiInvalid,
  unauthenticated: openaiUnauthenticated,
  error: (error) => openaiErrorFor(error, "chat"),
  answer(conversation, planned, signal) {
    const answer = openaiAnswer(planned);
    const headers = { "x-request-id": randomId("req_", 32) };
    const failFrame = answer.streamError && chatStreamError(answer.streamError);
    const delivery: Delivery = { slowMs: answer.slowMs, cut: answer.cut, failFrame, signal, headers };
    const toolCalls = toolCallsOf(answer);
    if (!conversation.stream) return jsonResponse(completionOf(conversation, answer, toolCalls), delivery);
    return sseResponse(streamFrames(conversation, answer, toolCalls), delivery);
  },
};
