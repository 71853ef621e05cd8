import type { RawMessageStreamEvent } from "@anthropic-ai/sdk/resources/messages";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import type { ResponseStreamEvent } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import { REFUSAL_TEXT } from "../src/mock-model/plan";
import { anthropicClient, openaiClient } from "./support/mock-clients";

/**
 * The offline model's `[[truncate]]` and `[[refuse]]` (docs/offline-model.md), driven with the
 * real SDKs: each wire format ends the way its vendor's server ends a cut or declined answer.
 */

const model = "mock-1";
const weather = '[[tool get_weather {"city":"Paris","days":3}]]';
const fullArguments = JSON.stringify({ city: "Paris", days: 3 });

async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const events: T[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

describe("offline model: [[truncate]]", () => {
  it("Anthropic: stop_reason max_tokens, the text as far as it got, in JSON and in the stream", async () => {
    const { anthropic } = anthropicClient();
    const messages = [{ role: "user" as const, content: "[[truncate 3]] one two three four" }];
    const message = await anthropic.messages.create({ model, max_tokens: 1024, messages });
    expect(message.stop_reason).toBe("max_tokens");
    expect(message.content).toEqual([{ type: "text", text: "You said: one ", citations: null }]);
    const streamed = await anthropic.messages.stream({ model, max_tokens: 1024, messages }).finalMessage();
    expect(streamed.stop_reason).toBe("max_tokens");
    expect(streamed.content).toEqual([{ type: "text", text: "You said: one ", citations: null }]);
  });

  it("cuts at the request's own max tokens (4 characters a token) when the answer is longer", async () => {
    const { anthropic } = anthropicClient();
    const messages = [{ role: "user" as const, content: "[[truncate]] [[words 100]]" }];
    const message = await anthropic.messages.create({ model, max_tokens: 16, messages });
    const text = message.content[0]?.type === "text" ? message.content[0].text : "";
    expect(message.stop_reason).toBe("max_tokens");
    expect(text.length).toBeLessThanOrEqual(64);
    expect(text.length).toBeGreaterThan(50);
    expect("lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor".startsWith(text)).toBe(true);
    expect(message.usage.output_tokens).toBeLessThanOrEqual(16);
    // An answer that fits is cut after half of its words.
    const short = await anthropic.messages.create({ model, max_tokens: 16, messages: [{ role: "user", content: "[[truncate]] a b c" }] });
    expect(short.content).toEqual([{ type: "text", text: "You said: ", citations: null }]);
  });

  it("Anthropic: a tool call cut mid-arguments streams partial input JSON and ends with max_tokens", async () => {
    const { anthropic } = anthropicClient();
    const messages = [{ role: "user" as const, content: `[[truncate]] ${weather}` }];
    const events = await collect<RawMessageStreamEvent>(
      await anthropic.messages.create({ model, max_tokens: 1024, messages, stream: true }),
    );
    const json = events
      .flatMap((e) => (e.type === "content_block_delta" && e.delta.type === "input_json_delta" ? [e.delta.partial_json] : []))
      .join("");
    expect(json).toBe(fullArguments.slice(0, Math.floor(fullArguments.length / 2)));
    expect(() => JSON.parse(json)).toThrow();
    const delta = events.find((e) => e.type === "message_delta");
    expect(delta?.type === "message_delta" && delta.delta.stop_reason).toBe("max_tokens");
    expect(events.at(-1)?.type).toBe("message_stop");
  });

  it("Responses: status incomplete with reason max_output_tokens, an incomplete message, response.incomplete last", async () => {
    const { openai } = openaiClient();
    const input = "[[truncate 3]] one two three four";
    const response = await openai.responses.create({ model, input });
    expect(response.status).toBe("incomplete");
    expect(response.incomplete_details).toEqual({ reason: "max_output_tokens" });
    expect(response.completed_at).toBeNull();
    expect(response.output).toMatchObject([
      { type: "message", status: "incomplete", content: [{ type: "output_text", text: "You said: one " }] },
    ]);
    const events = await collect<ResponseStreamEvent>(await openai.responses.create({ model, input, stream: true }));
    expect(events.at(-1)?.type).toBe("response.incomplete");
    expect(events.map((e) => e.type)).not.toContain("response.completed");
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const final = await openai.responses.stream({ model, input }).finalResponse();
    expect(final.status).toBe("incomplete");
    expect(final.output_text).toBe("You said: one ");
  });

  it("Responses: a cut before the first token has no message item ([[truncate 0]])", async () => {
    const response = await openaiClient().openai.responses.create({ model, input: "[[truncate 0]] think hard" });
    expect(response.status).toBe("incomplete");
    expect(response.output).toEqual([]);
  });

  it("Responses: a function call cut mid-arguments is incomplete", async () => {
    const { openai } = openaiClient();
    const input = `[[truncate]] ${weather}`;
    const events = await collect<ResponseStreamEvent>(await openai.responses.create({ model, input, stream: true }));
    const done = events.find((e) => e.type === "response.output_item.done");
    expect(done?.type === "response.output_item.done" && done.item).toMatchObject({
      type: "function_call",
      status: "incomplete",
      arguments: fullArguments.slice(0, Math.floor(fullArguments.length / 2)),
    });
    const last = events.at(-1);
    expect(last?.type === "response.incomplete" && last.response.incomplete_details).toEqual({ reason: "max_output_tokens" });
  });

  it("Chat Completions: finish_reason length, the content or the tool call's arguments as far as they got", async () => {
    const { openai } = openaiClient();
    const completion = await openai.chat.completions.create({
      model,
      messages: [{ role: "user", content: "[[truncate 3]] one two three four" }],
    });
    expect(completion.choices[0]).toMatchObject({ finish_reason: "length", message: { content: "You said: one " } });
    const chunks = await collect<ChatCompletionChunk>(
      await openai.chat.completions.create({ model, messages: [{ role: "user", content: `[[truncate]] ${weather}` }], stream: true }),
    );
    const json = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls?.map((t) => t.function?.arguments ?? "") ?? []).join("");
    expect(json).toBe(fullArguments.slice(0, Math.floor(fullArguments.length / 2)));
    expect(chunks.flatMap((c) => (c.choices[0]?.finish_reason ? [c.choices[0].finish_reason] : []))).toEqual(["length"]);
  });
});

describe("offline model: [[refuse]]", () => {
  it("Anthropic: stop_reason refusal with stop_details, after part of the answer, no refusal message", async () => {
    const { anthropic } = anthropicClient();
    const messages = [{ role: "user" as const, content: "[[refuse]] one two three four" }];
    const message = await anthropic.messages.create({ model, max_tokens: 1024, messages });
    expect(message.stop_reason).toBe("refusal");
    expect(message.stop_details).toEqual({ type: "refusal", category: null, explanation: null });
    expect(message.content).toEqual([{ type: "text", text: "You said: one ", citations: null }]);
    const events = await collect<RawMessageStreamEvent>(
      await anthropic.messages.create({ model, max_tokens: 1024, messages, stream: true }),
    );
    const delta = events.find((e) => e.type === "message_delta");
    expect(delta?.type === "message_delta" && delta.delta).toEqual({
      stop_reason: "refusal",
      stop_sequence: null,
      stop_details: { type: "refusal", category: null, explanation: null },
    });
  });

  it("Responses: a refusal content part, streamed as response.refusal.delta", async () => {
    const { openai } = openaiClient();
    const response = await openai.responses.create({ model, input: "[[refuse]] one two" });
    expect(response.status).toBe("completed");
    expect(response.output).toMatchObject([
      { type: "message", status: "completed", content: [{ type: "refusal", refusal: REFUSAL_TEXT }] },
    ]);
    const events = await collect<ResponseStreamEvent>(await openai.responses.create({ model, input: "[[refuse]] one two", stream: true }));
    const deltas = events.flatMap((e) => (e.type === "response.refusal.delta" ? [e.delta] : []));
    expect(deltas.join("")).toBe(REFUSAL_TEXT);
    expect(events.map((e) => e.type)).toContain("response.refusal.done");
    expect(events.map((e) => e.type)).not.toContain("response.output_text.delta");
    expect(events.at(-1)?.type).toBe("response.completed");
  });

  it("Chat Completions: message.refusal with null content, streamed as refusal deltas, finish_reason stop", async () => {
    const { openai } = openaiClient();
    const messages = [{ role: "user" as const, content: "[[refuse]] one two" }];
    const completion = await openai.chat.completions.create({ model, messages });
    expect(completion.choices[0]).toMatchObject({ finish_reason: "stop", message: { content: null, refusal: REFUSAL_TEXT } });
    const chunks = await collect<ChatCompletionChunk>(await openai.chat.completions.create({ model, messages, stream: true }));
    expect(chunks.map((c) => c.choices[0]?.delta.refusal ?? "").join("")).toBe(REFUSAL_TEXT);
    expect(chunks.some((c) => c.choices[0]?.delta.content)).toBe(false);
    const final = await openai.chat.completions.stream({ model, messages }).finalChatCompletion();
    expect(final.choices[0]?.message).toMatchObject({ content: null, refusal: REFUSAL_TEXT });
  });
});
