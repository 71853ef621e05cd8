import { generateObject, generateText, type ModelMessage, Output, stepCountIs, streamText, tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { agentryAISDK } from "./support/ai-sdk";
import { api, createAgent } from "./support/http";
import { sentRequests } from "./support/recording-fetch";

/**
 * The Vercel AI SDK (`ai` with `@ai-sdk/openai`) driving an Agentry agent over `/v1/responses`,
 * as its users write it: `createOpenAI({ baseURL, apiKey, fetch }).responses(agentId)`
 * (test/support/ai-sdk.ts). The agent is the offline model: it answers `You said: <last user
 * text>` and calls the tools its directives name.
 */

/** A zod tool as the AI SDK's users write it; `calls` records each execution's input. */
function weatherTool(calls: unknown[]) {
  return tool({
    description: "The weather in a city",
    inputSchema: z.object({ city: z.string() }),
    execute: async (input) => {
      calls.push(input);
      return "sunny";
    },
  });
}

const weather = z.object({ city: z.string(), temperature: z.number() });

describe("the AI SDK over /v1/responses", () => {
  it("generates a plain text answer", async () => {
    const agent = await createAgent();
    const sent = sentRequests();
    const result = await generateText({ model: agentryAISDK(sent).responses(agent.id), prompt: "hello" });
    expect(result.text).toBe("You said: hello");
    expect(result.finishReason).toBe("stop");
  });

  it("streams the answer as text deltas", async () => {
    const agent = await createAgent();
    const sent = sentRequests();
    const errors: unknown[] = [];
    const result = streamText({
      model: agentryAISDK(sent).responses(agent.id),
      prompt: "hello there",
      onError: ({ error }) => void errors.push(error),
    });
    let text = "";
    for await (const delta of result.textStream) text += delta;
    expect(errors.map(String)).toEqual([]);
    expect(text).toBe("You said: hello there");
    expect(await result.text).toBe("You said: hello there");
    expect(await result.finishReason).toBe("stop");
  });

  it("runs a zod tool once and answers with its result (stopWhen: stepCountIs(3))", async () => {
    const agent = await createAgent();
    const sent = sentRequests();
    const calls: unknown[] = [];
    const result = await generateText({
      model: agentryAISDK(sent).responses(agent.id),
      tools: { get_weather: weatherTool(calls) },
      stopWhen: stepCountIs(3),
      prompt: '[[tool get_weather {"city":"Paris"}]] weather?',
    });
    expect(calls).toEqual([{ city: "Paris" }]);
    expect(result.steps).toHaveLength(2);
    expect(result.text).toBe("You said: weather?\nget_weather returned: sunny");
  });

  // The stream shows what a chat UI shows; the text must be the answer's, as generateText's is.
  it("streams a tool loop", async () => {
    const agent = await createAgent();
    const sent = sentRequests();
    const calls: unknown[] = [];
    const errors: unknown[] = [];
    const result = streamText({
      model: agentryAISDK(sent).responses(agent.id),
      tools: { get_weather: weatherTool(calls) },
      stopWhen: stepCountIs(3),
      prompt: '[[tool get_weather {"city":"Rome"}]] weather?',
      onError: ({ error }) => void errors.push(error),
    });
    let text = "";
    for await (const delta of result.textStream) text += delta;
    expect(errors.map(String)).toEqual([]);
    expect(calls).toEqual([{ city: "Rome" }]);
    expect(text).toBe("You said: weather?\nget_weather returned: sunny");
  });

  it("generates a structured output (Output.object with a zod schema)", async () => {
    const agent = await createAgent();
    const sent = sentRequests();
    const result = await generateText({
      model: agentryAISDK(sent).responses(agent.id),
      output: Output.object({ schema: weather }),
      prompt: "[[json]] the weather in Paris",
    });
    // The offline model answers the schema's sample value (docs/offline-model.md).
    expect(result.output).toEqual({ city: "sample", temperature: 1 });
  });

  it("generates an object (generateObject with a zod schema)", async () => {
    const agent = await createAgent();
    const sent = sentRequests();
    const result = await generateObject({
      model: agentryAISDK(sent).responses(agent.id),
      schema: weather,
      prompt: "[[json]] the weather in Paris",
    });
    expect(result.object).toEqual({ city: "sample", temperature: 1 });
  });

  it("answers a second turn given the previous messages", async () => {
    const agent = await createAgent();
    const sent = sentRequests();
    const model = agentryAISDK(sent).responses(agent.id);
    const messages: ModelMessage[] = [{ role: "user", content: "first" }];
    const first = await generateText({ model, messages });
    expect(first.text).toBe("You said: first");
    messages.push(...first.response.messages, { role: "user", content: "second" });
    const second = await generateText({ model, messages });
    expect(second.text).toBe("You said: second");
  });

  // The AI SDK refers to the answer it got back by id (an item_reference to Agentry's message item) instead of resending it.
  it("answers a turn after a tool loop, given the previous messages: a new session seeded with that history", async () => {
    const agent = await createAgent();
    const sent = sentRequests();
    const model = agentryAISDK(sent).responses(agent.id);
    const calls: unknown[] = [];
    const messages: ModelMessage[] = [{ role: "user", content: '[[tool get_weather {"city":"Oslo"}]] weather?' }];
    const loop = await generateText({ model, tools: { get_weather: weatherTool(calls) }, stopWhen: stepCountIs(3), messages });
    messages.push(...loop.response.messages, { role: "user", content: "thanks" });
    const next = await generateText({ model, tools: { get_weather: weatherTool(calls) }, messages });
    expect(next.text).toBe("You said: thanks");
    expect(calls).toEqual([{ city: "Oslo" }]);
    const last = sent.at(-1)?.body as { input: { type?: string; id?: string }[] };
    const references = last.input.filter((item) => item.type === "item_reference");
    expect(references).toHaveLength(1);
    const run = await (await api(`/v1/agents/${agent.id}/runs/${next.response.id}`)).json<{ session_id: string }>();
    const transcript = await (await api(`/v1/sessions/${run.session_id}/transcript`)).json<{
      data: { role: string; content: { type: string; text?: string }[] }[];
    }>();
    expect(transcript.data.map((m) => [m.role, m.content.map((b) => b.text ?? b.type).join("")])).toEqual([
      ["user", '[[tool get_weather {"city":"Oslo"}]] weather?'],
      ["assistant", "You said: weather?\nget_weather returned: sunny"],
      ["user", "thanks"],
      ["assistant", "You said: thanks"],
    ]);
  });

  it("answers a second turn with providerOptions.openai.previousResponseId", async () => {
    const agent = await createAgent();
    const sent = sentRequests();
    const model = agentryAISDK(sent).responses(agent.id);
    const first = await generateText({ model, prompt: "first" });
    expect(first.text).toBe("You said: first");
    const previousResponseId = first.providerMetadata?.openai?.responseId as string;
    expect(previousResponseId).toMatch(/^run_/);
    const second = await generateText({ model, prompt: "second", providerOptions: { openai: { previousResponseId } } });
    expect(second.text).toBe("You said: second");
    const secondId = second.providerMetadata?.openai?.responseId as string;
    const conversations = await Promise.all(
      [previousResponseId, secondId].map(
        async (id) => (await (await api(`/v1/responses/${id}`)).json<{ conversation: { id: string } }>()).conversation.id,
      ),
    );
    expect(conversations[1]).toBe(conversations[0]);
  });

  it("follows a system prompt (instructions, and the deprecated system)", async () => {
    const agent = await createAgent();
    const sent = sentRequests();
    const model = agentryAISDK(sent).responses(agent.id);
    const withInstructions = await generateText({ model, instructions: "Answer briefly.", prompt: "hello" });
    expect(withInstructions.text).toBe("You said: hello");
    const withSystem = await generateText({ model, system: "Answer briefly.", prompt: "hello again" });
    expect(withSystem.text).toBe("You said: hello again");
  });

  it("answers the last user message of a chat history with assistant messages", async () => {
    const agent = await createAgent();
    const sent = sentRequests();
    const result = await generateText({
      model: agentryAISDK(sent).responses(agent.id),
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: "Hello! How can I help?" },
        { role: "user", content: "what is the weather?" },
      ],
    });
    expect(result.text).toBe("You said: what is the weather?");
  });
});
