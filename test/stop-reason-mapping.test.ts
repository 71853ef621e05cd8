import type { RawMessageStreamEvent } from "@anthropic-ai/sdk/resources/messages";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import type { Response } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import { MessageAccumulator } from "../src/providers/anthropic-stream";
import { ChatAccumulator } from "../src/providers/openai-chat-stream";
import { stopReason, toBlocks } from "../src/providers/openai-responses-output";
import { stoppedAnswer } from "../src/run-model/stop-reasons";

/**
 * Every vendor stop reason, neutral, and the run error it ends with (docs/providers.md, Stop
 * reasons): the ones the offline model cannot produce (context window, pause, content filters,
 * a refusal's explanation) as well as the ones it can.
 */

const noop = () => {};

function anthropicAnswer(stop: string, details: unknown = null, blocks: RawMessageStreamEvent[] = []) {
  const acc = new MessageAccumulator(noop, noop);
  const events = [
    { type: "message_start", message: { usage: { input_tokens: 10, output_tokens: 1 } } },
    { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Partial" } },
    { type: "content_block_stop", index: 0 },
    ...blocks,
    { type: "message_delta", delta: { stop_reason: stop, stop_sequence: null, stop_details: details }, usage: { output_tokens: 7 } },
    { type: "message_stop" },
  ] as unknown as RawMessageStreamEvent[];
  for (const event of events) acc.add(event);
  return acc.result();
}

function chatAnswer(finish: string, delta: Record<string, unknown>) {
  const acc = new ChatAccumulator(noop, noop);
  const chunk = (d: Record<string, unknown>, finish_reason: string | null) =>
    ({
      id: "c",
      object: "chat.completion.chunk",
      created: 0,
      model: "m",
      choices: [{ index: 0, delta: d, finish_reason }],
    }) as unknown as ChatCompletionChunk;
  acc.add(chunk({ role: "assistant", ...delta }, null));
  acc.add(chunk({}, finish));
  return acc.result();
}

function responsesAnswer(response: Partial<Response>) {
  const full = { status: "completed", incomplete_details: null, output: [], ...response } as Response;
  const content = full.output.flatMap(toBlocks);
  return { content, ...stopReason(full, content) };
}

describe("stop reasons, from each vendor to the run's error", () => {
  it("Anthropic: max_tokens, model_context_window_exceeded, refusal (with its explanation), pause_turn", () => {
    expect(stoppedAnswer(anthropicAnswer("max_tokens"), 100)).toMatchObject({
      error: {
        type: "output_truncated",
        retryable: false,
        message: expect.stringMatching(/max_output_tokens \(100\).*stop_reason max_tokens/),
      },
      content: [{ type: "text", text: "Partial" }],
    });
    expect(stoppedAnswer(anthropicAnswer("model_context_window_exceeded"), 100)?.error).toMatchObject({
      type: "context_window_exceeded",
      message: expect.stringMatching(/context window.*model_context_window_exceeded/),
    });
    const refusal = anthropicAnswer("refusal", { type: "refusal", category: "cyber", explanation: "Declined: cyber harm." });
    expect(stoppedAnswer(refusal, 100)?.error).toMatchObject({
      type: "refused",
      message: "The model declined to answer (Anthropic stop_reason refusal (cyber: Declined: cyber harm.))",
    });
    expect(stoppedAnswer(anthropicAnswer("pause_turn"), 100)?.error).toMatchObject({ type: "provider_error", retryable: false });
    expect(stoppedAnswer(anthropicAnswer("end_turn"), 100)).toBeNull();
    expect(stoppedAnswer(anthropicAnswer("stop_sequence"), 100)).toBeNull();
  });

  it("a cut answer keeps only its text: no tool call, no reasoning", () => {
    const tool = [
      { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "toolu_1", name: "t", input: {} } },
      { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"city":"Pa' } },
      { type: "content_block_stop", index: 1 },
    ] as unknown as RawMessageStreamEvent[];
    const answer = anthropicAnswer("max_tokens", null, tool);
    expect(answer.content.map((b) => b.type)).toEqual(["text", "tool_call"]);
    expect(stoppedAnswer(answer, 100)?.content).toEqual([{ type: "text", text: "Partial" }]);
  });

  it("Responses: incomplete by max_output_tokens or content_filter, a refusal part, a reasoning model that answered nothing", () => {
    const message = (content: unknown[]) => ({ type: "message", id: "msg_1", role: "assistant", status: "incomplete", content });
    const cut = responsesAnswer({
      status: "incomplete",
      incomplete_details: { reason: "max_output_tokens" },
      output: [message([{ type: "output_text", text: "Part", annotations: [] }])] as Response["output"],
    });
    expect(stoppedAnswer(cut, 64)?.error).toMatchObject({
      type: "output_truncated",
      message: expect.stringMatching(/incomplete \(max_output_tokens\)/),
    });
    const filtered = responsesAnswer({ status: "incomplete", incomplete_details: { reason: "content_filter" } });
    expect(stoppedAnswer(filtered, 64)?.error).toMatchObject({ type: "refused", message: expect.stringMatching(/content_filter/) });
    const refused = responsesAnswer({ output: [message([{ type: "refusal", refusal: "No." }])] as Response["output"] });
    expect(stoppedAnswer(refused, 64)).toEqual({
      error: { type: "refused", retryable: false, message: "The model declined to answer (Responses refusal: No.)" },
      content: [{ type: "text", text: "No." }],
    });
    // A reasoning model that spent its whole budget thinking: a reasoning item, no message.
    const thought = responsesAnswer({
      status: "incomplete",
      incomplete_details: { reason: "max_output_tokens" },
      output: [{ type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "hmm" }] }] as Response["output"],
    });
    expect(stoppedAnswer(thought, 64)).toMatchObject({ error: { type: "output_truncated" }, content: [{ type: "text", text: "" }] });
    expect(
      stoppedAnswer(
        responsesAnswer({ output: [message([{ type: "output_text", text: "ok", annotations: [] }])] as Response["output"] }),
        64,
      ),
    ).toBeNull();
  });

  it("Chat Completions: length, content_filter, a refusal, and an empty answer cut by length", () => {
    expect(stoppedAnswer(chatAnswer("length", { content: "Part" }), 32)).toMatchObject({
      error: { type: "output_truncated", message: expect.stringMatching(/finish_reason length/) },
      content: [{ type: "text", text: "Part" }],
    });
    expect(stoppedAnswer(chatAnswer("length", { content: "" }), 32)).toMatchObject({
      error: { type: "output_truncated" },
      content: [{ type: "text", text: "" }],
    });
    expect(stoppedAnswer(chatAnswer("content_filter", { content: "Pa" }), 32)?.error).toMatchObject({
      type: "refused",
      message: expect.stringMatching(/finish_reason content_filter/),
    });
    expect(stoppedAnswer(chatAnswer("stop", { content: null, refusal: "I can't." }), 32)).toMatchObject({
      error: { type: "refused", message: "The model declined to answer (Chat Completions refusal: I can't.)" },
      content: [{ type: "text", text: "I can't." }],
    });
    expect(stoppedAnswer(chatAnswer("stop", { content: "fine" }), 32)).toBeNull();
  });
});
