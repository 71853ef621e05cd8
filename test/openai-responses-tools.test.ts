import OpenAI from "openai";
import type { FunctionTool, ResponseStreamEvent } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import { api, createAgent } from "./support/http";
import { agentryOpenAI } from "./support/openai-sdk";

const weather: FunctionTool = {
  type: "function",
  name: "get_weather",
  description: "The weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  strict: false,
};

describe("client function tools over /v1/responses", () => {
  it("ends a response with function_call items, then continues it with function_call_output and previous_response_id", async () => {
    const agent = await createAgent();
    const client = agentryOpenAI();
    const asked = await client.responses.create({
      model: agent.id,
      input: '[[tool get_weather {"city":"Paris"}]] weather?',
      tools: [weather],
    });
    expect(asked.status).toBe("completed");
    expect(asked.output).toHaveLength(1);
    const [call] = asked.output;
    expect(call).toMatchObject({ type: "function_call", name: "get_weather", status: "completed" });
    if (call?.type !== "function_call") throw new Error("expected a function_call item");
    expect(JSON.parse(call.arguments)).toEqual({ city: "Paris" });
    // The paused response answered when the run paused: blocking, retrieved and streamed alike.
    expect(asked.completed_at).toEqual(expect.any(Number));
    expect(await client.responses.retrieve(asked.id)).toEqual(asked);
    const streamed: ResponseStreamEvent[] = [];
    for await (const event of await client.responses.retrieve(asked.id, { stream: true })) streamed.push(event);
    expect(streamed.at(-1)).toMatchObject({ type: "response.completed", response: { completed_at: asked.completed_at } });

    const answered = await client.responses.create({
      model: agent.id,
      previous_response_id: asked.id,
      input: [{ type: "function_call_output", call_id: call.call_id, output: "sunny" }],
      tools: [weather],
    });
    expect(answered).toMatchObject({ status: "completed", output_text: "You said: weather?\nget_weather returned: sunny" });

    const next = await client.responses.create({ model: agent.id, previous_response_id: answered.id, input: "thanks" });
    expect(next.output_text).toBe("You said: thanks");
    const agentNow = await (await api(`/v1/agents/${agent.id}`)).json<{ tools: unknown[] }>();
    expect(agentNow.tools).toEqual([]);
  });

  it("refuses a function tool named like one of the agent's tools, a hosted tool, and outputs that answer no paused response", async () => {
    const agent = await createAgent({ tools: [{ type: "builtin", name: "current_time" }] });
    const client = agentryOpenAI();
    const cases: [Record<string, unknown>, string][] = [
      [{ tools: [{ ...weather, name: "current_time" }] }, "tools[0].name"],
      [{ tools: [{ type: "web_search" }] }, "tools[0].type"],
      [{ input: [{ type: "function_call_output", call_id: "call_1", output: "x" }] }, "input[0].call_id"],
    ];
    for (const [fields, param] of cases) {
      const error = await client.responses.create({ model: agent.id, input: "hi", ...fields } as never).catch((e: unknown) => e);
      expect(error, param).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as InstanceType<typeof OpenAI.BadRequestError>).error, param).toMatchObject({ param });
    }
    expect((await (await api(`/v1/agents/${agent.id}/runs`)).json<{ data: unknown[] }>()).data).toEqual([]);
  });

  it("refuses request tools that bring an OpenAI agent over the 128 tools OpenAI takes, and runs nothing", async () => {
    const tool = (name: string) => ({ type: "client", name, parameters: { type: "object", properties: {} } });
    const agent = await createAgent({
      provider: "openai",
      model: "gpt-4.1",
      base_url: "mock:",
      tools: Array.from({ length: 100 }, (_, i) => tool(`agent_${i}`)),
    });
    const client = agentryOpenAI();
    const tools = Array.from({ length: 29 }, (_, i) => ({ ...weather, name: `request_${i}` }));
    const error = await client.responses.create({ model: agent.id, input: "hi", tools }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
      param: "tools",
      message: expect.stringContaining("has 129 tools; OpenAI takes at most 128 in a request"),
    });
    expect((await (await api(`/v1/agents/${agent.id}/runs`)).json<{ data: unknown[] }>()).data).toEqual([]);
    const fine = await client.responses.create({ model: agent.id, input: "hi", tools: tools.slice(0, 28) });
    expect(fine.output_text).toBe("You said: hi");
  });
});

describe("an agent whose tools require approval, over /v1/responses", () => {
  it("is refused with a 400 naming model: the Responses API has no item to answer an approval", async () => {
    const agent = await createAgent({ tools: [{ type: "builtin", name: "current_time", requires_approval: true }] });
    const response = await api("/v1/responses", { body: { model: agent.id, input: "what time is it?" } });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: {
        type: "invalid_request_error",
        code: "invalid_request",
        param: "model",
        message: `model: the agent's tool "current_time" requires approval, which /v1/responses cannot answer: use POST /v1/agents/{agent_id}/runs`,
      },
    });
    expect((await (await api(`/v1/agents/${agent.id}/runs`)).json<{ data: unknown[] }>()).data).toEqual([]);
  });
});
