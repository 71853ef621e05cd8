import { Agent, assistant, run, tool, user } from "@openai/agents";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { api, createAgent } from "./support/http";
import { agentryResponsesModel, agentryRunner } from "./support/openai-agents";
import { sentRequests } from "./support/recording-fetch";

/**
 * The OpenAI Agents SDK (`@openai/agents`) driving an Agentry agent over `/v1/responses`, as its
 * users write it: the agent id is the Agent's `model`, the Runner's provider is the OpenAI
 * provider with a client pointed at the Worker (test/support/openai-agents.ts). The agent is the
 * offline model: it answers `You said: <last user text>` and calls the tools its directives name.
 */

/** The session (conversation) of a response, as Agentry shows it. */
async function conversationOf(responseId: string | undefined): Promise<string> {
  const response = await api(`/v1/responses/${responseId}`);
  expect(response.status).toBe(200);
  return (await response.json<{ conversation: { id: string } }>()).conversation.id;
}

/** A zod tool as the SDK's users write it (strict by default); `calls` records each execution's arguments. */
function weatherTool(calls: unknown[]) {
  return tool({
    name: "get_weather",
    description: "The weather in a city",
    parameters: z.object({ city: z.string() }),
    execute: async (args) => {
      calls.push(args);
      return "sunny";
    },
  });
}

describe("the OpenAI Agents SDK over /v1/responses", () => {
  it("runs an agent to a plain text answer", async () => {
    const agent = await createAgent();
    const sent = sentRequests();
    const result = await agentryRunner(sent).run(new Agent({ name: "helper", model: agent.id }), "hello");
    expect(result.finalOutput).toBe("You said: hello");
  });

  it("runs an Agent whose model is an OpenAIResponsesModel over the Worker (the default run())", async () => {
    const agent = await createAgent();
    const sent = sentRequests();
    const result = await run(new Agent({ name: "helper", model: agentryResponsesModel(agent.id, sent) }), "hello");
    expect(result.finalOutput).toBe("You said: hello");
  });

  it("streams the answer as text deltas", async () => {
    const agent = await createAgent();
    const sent = sentRequests();
    const result = await agentryRunner(sent).run(new Agent({ name: "helper", model: agent.id }), "hello there", { stream: true });
    let text = "";
    for await (const delta of result.toTextStream()) text += delta;
    await result.completed;
    expect(text).toBe("You said: hello there");
    expect(result.finalOutput).toBe("You said: hello there");
  });

  it("runs a zod function tool once and answers with its result", async () => {
    const agent = await createAgent();
    const sent = sentRequests();
    const calls: unknown[] = [];
    const helper = new Agent({ name: "helper", model: agent.id, tools: [weatherTool(calls)] });
    const result = await agentryRunner(sent).run(helper, '[[tool get_weather {"city":"Paris"}]] weather?');
    expect(calls).toEqual([{ city: "Paris" }]);
    expect(result.finalOutput).toBe("You said: weather?\nget_weather returned: sunny");
  });

  // The streamed text is what a chat UI shows: the answer's, as the non-streamed finalOutput is.
  it("streams a run with a tool loop", async () => {
    const agent = await createAgent();
    const sent = sentRequests();
    const calls: unknown[] = [];
    const helper = new Agent({ name: "helper", model: agent.id, tools: [weatherTool(calls)] });
    const result = await agentryRunner(sent).run(helper, '[[tool get_weather {"city":"Rome"}]] weather?', { stream: true });
    let text = "";
    for await (const delta of result.toTextStream()) text += delta;
    await result.completed;
    expect(calls).toEqual([{ city: "Rome" }]);
    expect(text).toBe("You said: weather?\nget_weather returned: sunny");
    expect(result.finalOutput).toBe("You said: weather?\nget_weather returned: sunny");
  });

  it("runs a tool loop inside a server-managed conversation (previousResponseId)", async () => {
    const agent = await createAgent();
    const sent = sentRequests();
    const runner = agentryRunner(sent);
    const calls: unknown[] = [];
    const helper = new Agent({ name: "helper", model: agent.id, tools: [weatherTool(calls)] });
    const first = await runner.run(helper, "hello");
    expect(first.finalOutput).toBe("You said: hello");
    const second = await runner.run(helper, '[[tool get_weather {"city":"Oslo"}]] and now?', { previousResponseId: first.lastResponseId });
    expect(calls).toEqual([{ city: "Oslo" }]);
    expect(second.finalOutput).toBe("You said: and now?\nget_weather returned: sunny");
    expect(await conversationOf(second.lastResponseId)).toBe(await conversationOf(first.lastResponseId));
  });

  it("answers a structured output (outputType: a zod object)", async () => {
    const agent = await createAgent();
    const sent = sentRequests();
    const helper = new Agent({
      name: "helper",
      model: agent.id,
      outputType: z.object({ city: z.string(), temperature: z.number() }),
    });
    const result = await agentryRunner(sent).run(helper, "[[json]] the weather in Paris");
    // The offline model answers the schema's sample value (docs/offline-model.md).
    expect(result.finalOutput).toEqual({ city: "sample", temperature: 1 });
  });

  it("continues a conversation with previousResponseId", async () => {
    const agent = await createAgent();
    const sent = sentRequests();
    const runner = agentryRunner(sent);
    const helper = new Agent({ name: "helper", model: agent.id });
    const first = await runner.run(helper, "first");
    expect(first.finalOutput).toBe("You said: first");
    const second = await runner.run(helper, "second", { previousResponseId: first.lastResponseId });
    expect(second.finalOutput).toBe("You said: second");
    expect(second.lastResponseId).not.toBe(first.lastResponseId);
    expect(await conversationOf(second.lastResponseId)).toBe(await conversationOf(first.lastResponseId));
  });

  it("continues a conversation with conversationId (a new session id starts that session)", async () => {
    const agent = await createAgent();
    const sent = sentRequests();
    const runner = agentryRunner(sent);
    const helper = new Agent({ name: "helper", model: agent.id });
    const conversationId = `conv-${crypto.randomUUID()}`;
    const first = await runner.run(helper, "first", { conversationId });
    expect(first.finalOutput).toBe("You said: first");
    const second = await runner.run(helper, "second", { conversationId });
    expect(second.finalOutput).toBe("You said: second");
    expect(await conversationOf(first.lastResponseId)).toBe(conversationId);
    expect(await conversationOf(second.lastResponseId)).toBe(conversationId);
  });

  it("follows the agent's instructions (a system prompt)", async () => {
    const agent = await createAgent();
    const sent = sentRequests();
    const helper = new Agent({ name: "helper", model: agent.id, instructions: "Answer briefly." });
    const result = await agentryRunner(sent).run(helper, "hello");
    expect(result.finalOutput).toBe("You said: hello");
  });

  it("answers the last user message of a chat history with assistant messages", async () => {
    const agent = await createAgent();
    const sent = sentRequests();
    const helper = new Agent({ name: "helper", model: agent.id });
    const result = await agentryRunner(sent).run(helper, [user("hi"), assistant("Hello! How can I help?"), user("what is the weather?")]);
    expect(result.finalOutput).toBe("You said: what is the weather?");
  });

  it("carries the history of a finished run into the next one (result.history)", async () => {
    const agent = await createAgent();
    const sent = sentRequests();
    const runner = agentryRunner(sent);
    const helper = new Agent({ name: "helper", model: agent.id });
    const first = await runner.run(helper, "first");
    expect(first.finalOutput).toBe("You said: first");
    const second = await runner.run(helper, [...first.history, user("second")]);
    expect(second.finalOutput).toBe("You said: second");
  });
});
