import { AIMessage, type AIMessageChunk, type BaseMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { api, createAgent } from "./support/http";
import { agentryChatOpenAI } from "./support/langchain-openai";
import { sentRequests } from "./support/recording-fetch";

/**
 * LangChain's `ChatOpenAI` (`@langchain/openai`, `useResponsesApi: true`) driving an Agentry agent
 * over `/v1/responses`, as its users write it: `model` is the agent id, `configuration: { baseURL,
 * fetch }` (test/support/langchain-openai.ts). The agent is the offline model: it answers
 * `You said: <last user text>` and calls the tools its directives name.
 */

/** A zod tool as LangChain's users write it; `calls` records each execution's arguments. */
function weatherTool(calls: unknown[]) {
  return tool(
    async (input) => {
      calls.push(input);
      return "sunny";
    },
    { name: "get_weather", description: "The weather in a city", schema: z.object({ city: z.string() }) },
  );
}

const weather = z.object({ city: z.string(), temperature: z.number() });

describe("LangChain ChatOpenAI (Responses API) over /v1/responses", () => {
  it("invokes the model for a plain text answer", async () => {
    const agent = await createAgent();
    const sent = sentRequests();
    const answer = await agentryChatOpenAI(agent.id, sent).invoke([new HumanMessage("hello")]);
    expect(answer.text).toBe("You said: hello");
  });

  it("streams the answer as chunks", async () => {
    const agent = await createAgent();
    const sent = sentRequests();
    let text = "";
    for await (const chunk of await agentryChatOpenAI(agent.id, sent).stream([new HumanMessage("hello there")])) text += chunk.text;
    expect(text).toBe("You said: hello there");
  });

  it("runs a bound zod tool once and answers with its result (ToolMessage round trip)", async () => {
    const agent = await createAgent();
    const sent = sentRequests();
    const calls: unknown[] = [];
    const getWeather = weatherTool(calls);
    const model = agentryChatOpenAI(agent.id, sent).bindTools([getWeather]);
    const messages: BaseMessage[] = [new HumanMessage('[[tool get_weather {"city":"Paris"}]] weather?')];
    const asked = await model.invoke(messages);
    expect(asked.tool_calls).toHaveLength(1);
    expect(asked.tool_calls?.[0]).toMatchObject({ name: "get_weather", args: { city: "Paris" } });
    messages.push(asked);
    for (const call of asked.tool_calls ?? []) messages.push(await getWeather.invoke(call));
    expect(calls).toEqual([{ city: "Paris" }]);
    const answer = await model.invoke(messages);
    expect(answer.tool_calls).toEqual([]);
    expect(answer.text).toBe("You said: weather?\nget_weather returned: sunny");
  });

  it("streams a tool call and the answer after its ToolMessage", async () => {
    const agent = await createAgent();
    const sent = sentRequests();
    const calls: unknown[] = [];
    const getWeather = weatherTool(calls);
    const model = agentryChatOpenAI(agent.id, sent).bindTools([getWeather]);
    const messages: BaseMessage[] = [new HumanMessage('[[tool get_weather {"city":"Rome"}]] weather?')];
    let asked: AIMessageChunk | undefined;
    for await (const chunk of await model.stream(messages)) asked = asked === undefined ? chunk : asked.concat(chunk);
    expect(asked?.tool_calls).toHaveLength(1);
    expect(asked?.tool_calls?.[0]).toMatchObject({ name: "get_weather", args: { city: "Rome" } });
    messages.push(asked as AIMessageChunk);
    for (const call of asked?.tool_calls ?? []) messages.push(await getWeather.invoke(call));
    expect(calls).toEqual([{ city: "Rome" }]);
    let text = "";
    for await (const chunk of await model.stream(messages)) text += chunk.text;
    expect(text).toBe("You said: weather?\nget_weather returned: sunny");
  });

  it("answers a structured output (withStructuredOutput, a zod schema: json_schema by default)", async () => {
    const agent = await createAgent();
    const sent = sentRequests();
    const model = agentryChatOpenAI(agent.id, sent).withStructuredOutput(weather);
    // The offline model answers the schema's sample value (docs/offline-model.md).
    expect(await model.invoke([new HumanMessage("[[json]] the weather in Paris")])).toEqual({ city: "sample", temperature: 1 });
  });

  it("answers a structured output by function calling (withStructuredOutput, method functionCalling)", async () => {
    const agent = await createAgent();
    const sent = sentRequests();
    const model = agentryChatOpenAI(agent.id, sent).withStructuredOutput(weather, { name: "weather", method: "functionCalling" });
    const answer = await model.invoke([new HumanMessage('[[tool weather {"city":"Paris","temperature":21}]] the weather in Paris')]);
    expect(answer).toEqual({ city: "Paris", temperature: 21 });
  });

  it("answers a second turn given the message history", async () => {
    const agent = await createAgent();
    const sent = sentRequests();
    const model = agentryChatOpenAI(agent.id, sent);
    const messages: BaseMessage[] = [new HumanMessage("first")];
    const first = await model.invoke(messages);
    expect(first.text).toBe("You said: first");
    messages.push(first, new HumanMessage("second"));
    const second = await model.invoke(messages);
    expect(second.text).toBe("You said: second");
  });

  it("answers a second turn with previous_response_id", async () => {
    const agent = await createAgent();
    const sent = sentRequests();
    const model = agentryChatOpenAI(agent.id, sent);
    const first = await model.invoke([new HumanMessage("first")]);
    expect(first.text).toBe("You said: first");
    const firstId = first.response_metadata.id as string;
    expect(firstId).toMatch(/^run_/);
    const second = await model.invoke([new HumanMessage("second")], { previous_response_id: firstId });
    expect(second.text).toBe("You said: second");
    const conversations = await Promise.all(
      [firstId, second.response_metadata.id as string].map(
        async (id) => (await (await api(`/v1/responses/${id}`)).json<{ conversation: { id: string } }>()).conversation.id,
      ),
    );
    expect(conversations[1]).toBe(conversations[0]);
  });

  it("follows a system prompt (SystemMessage)", async () => {
    const agent = await createAgent();
    const sent = sentRequests();
    const answer = await agentryChatOpenAI(agent.id, sent).invoke([new SystemMessage("Answer briefly."), new HumanMessage("hello")]);
    expect(answer.text).toBe("You said: hello");
  });

  it("answers the last user message of a chat history with assistant messages", async () => {
    const agent = await createAgent();
    const sent = sentRequests();
    const answer = await agentryChatOpenAI(agent.id, sent).invoke([
      new HumanMessage("hi"),
      new AIMessage("Hello! How can I help?"),
      new HumanMessage("what is the weather?"),
    ]);
    expect(answer.text).toBe("You said: what is the weather?");
  });
});
