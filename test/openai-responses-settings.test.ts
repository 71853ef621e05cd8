import { env } from "cloudflare:workers";
import OpenAI from "openai";
import type { FunctionTool } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import { api, createAgent } from "./support/http";
import { agentryOpenAI } from "./support/openai-sdk";
import { requestsOf, upstreamBase } from "./support/upstreams";

const weather: FunctionTool = {
  type: "function",
  name: "get_weather",
  description: "The weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
  strict: true,
};

describe("/v1/responses settings", () => {
  it("accepts every field at its default value, and answers a Response that reports them", async () => {
    const agent = await createAgent();
    const response = await agentryOpenAI().responses.create({
      model: agent.id,
      input: "Hello",
      include: [],
      tool_choice: "auto",
      parallel_tool_calls: true,
      truncation: "disabled",
      store: true,
      stream: false,
      service_tier: "auto",
      background: false,
      top_logprobs: 0,
      text: { format: { type: "text" }, verbosity: "medium" },
      user: "end-user-1",
      safety_identifier: "end-user-1",
      prompt_cache_key: "cache-1",
      metadata: {},
      instructions: null,
    });
    expect(response).toMatchObject({
      status: "completed",
      output_text: "You said: Hello",
      tool_choice: "auto",
      parallel_tool_calls: true,
      truncation: "disabled",
      store: true,
      service_tier: "default",
      background: false,
      top_logprobs: 0,
      temperature: 1,
      top_p: 1,
      presence_penalty: 0,
      frequency_penalty: 0,
      max_output_tokens: 4096,
      max_tool_calls: null,
      reasoning: { effort: null, summary: null },
      user: "end-user-1",
      safety_identifier: "end-user-1",
      prompt_cache_key: "cache-1",
    });
  });

  it("sends the request's settings to the provider, reports them, and retrieve answers the same object", async () => {
    const bucket = crypto.randomUUID();
    const agent = await createAgent({ provider: "openai", model: "gpt-4.1", base_url: upstreamBase(env.GATEWAY_URL, bucket, "openai") });
    const client = agentryOpenAI();
    const created = await client.responses.create({
      model: agent.id,
      input: "Hello",
      instructions: "Be brief.",
      temperature: 0.3,
      top_p: 0.9,
      max_output_tokens: 100,
      tool_choice: "none",
      parallel_tool_calls: false,
      tools: [weather],
      safety_identifier: "end-user-42",
      prompt_cache_key: "cache-key-1",
    });
    expect(created).toMatchObject({
      status: "completed",
      output_text: "You said: Hello",
      temperature: 0.3,
      top_p: 0.9,
      max_output_tokens: 100,
      tool_choice: "none",
    });
    expect(created.tools).toEqual([{ ...weather }]);
    expect(created.instructions).toBe("Be brief.");
    expect(await client.responses.retrieve(created.id)).toEqual(created);
    const [sent] = await requestsOf(env.GATEWAY_URL, bucket);
    expect(sent?.body).toMatchObject({
      temperature: 0.3,
      top_p: 0.9,
      max_output_tokens: 100,
      tool_choice: "none",
      parallel_tool_calls: false,
      instructions: "Be brief.",
      tools: [{ type: "function", name: "get_weather", strict: true }],
      safety_identifier: "end-user-42",
      prompt_cache_key: "cache-key-1",
    });
  });

  it("sends a user id longer than the provider takes as its SHA-256, and reports it as given", async () => {
    const bucket = crypto.randomUUID();
    const agent = await createAgent({ provider: "openai", model: "gpt-4.1", base_url: upstreamBase(env.GATEWAY_URL, bucket, "openai") });
    const user = `user-${"x".repeat(95)}`;
    const created = await agentryOpenAI().responses.create({ model: agent.id, input: "Hello", user });
    expect(created.user).toBe(user);
    const digest = Array.from(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(user))), (b) =>
      b.toString(16).padStart(2, "0"),
    ).join("");
    const [sent] = await requestsOf(env.GATEWAY_URL, bucket);
    expect(sent?.body).toMatchObject({ safety_identifier: digest });
  });

  it("refuses temperature on a reasoning model as OpenAI does, and nothing is stored", async () => {
    const agent = await createAgent({ provider: "openai", model: "gpt-5", base_url: "mock:" });
    const error = await agentryOpenAI()
      .responses.create({ model: agent.id, input: "Hello", temperature: 0.5 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
      param: "temperature",
      message: "temperature: is not supported with the reasoning model gpt-5 (OpenAI refuses it)",
    });
    expect((await (await api(`/v1/agents/${agent.id}/runs`)).json<{ data: unknown[] }>()).data).toEqual([]);
  });

  it("obeys tool_choice: none answers without a call, a named function is called without being asked", async () => {
    const agent = await createAgent();
    const client = agentryOpenAI();
    const none = await client.responses.create({
      model: agent.id,
      input: '[[tool get_weather {"city":"Paris"}]] weather?',
      tools: [weather],
      tool_choice: "none",
    });
    expect(none.output.map((item) => item.type)).toEqual(["message"]);
    expect(none.output_text).toBe("You said: weather?");
    const named = await client.responses.create({
      model: agent.id,
      input: "Anything",
      tools: [weather],
      tool_choice: { type: "function", name: "get_weather" },
    });
    expect(named.output).toMatchObject([{ type: "function_call", name: "get_weather" }]);
  });

  it("answers a strict tool's call that misses its parameters with a tool error the model reads; the client is never asked", async () => {
    const agent = await createAgent();
    const response = await agentryOpenAI().responses.create({
      model: agent.id,
      input: '[[tool get_weather {"town":"Paris"}]] weather?',
      tools: [weather],
    });
    expect(response.status).toBe("completed");
    expect(
      response.output.filter((item) => item.type === "function_call").map((item) => item.type === "function_call" && item.call_id),
    ).toHaveLength(1);
    expect(response.output.at(-1)?.type).toBe("message");
    expect(response.output_text).toContain(
      "get_weather returned: The arguments of get_weather do not match its parameters, so it was not run:",
    );
  });

  it("caps a run's tool calls at max_tool_calls: later calls are not run and the model reads why", async () => {
    const agent = await createAgent({ tools: [{ type: "builtin", name: "current_time" }] });
    const response = await agentryOpenAI().responses.create({
      model: agent.id,
      input: "[[parallel]] [[tool current_time {}]] [[tool current_time {}]] time?",
      max_tool_calls: 1,
    });
    expect(response.max_tool_calls).toBe(1);
    const outputs = response.output
      .filter((item) => item.type === "function_call_output")
      .map((item) => item.type === "function_call_output" && item.output);
    expect(outputs).toHaveLength(2);
    expect(outputs.filter((output) => output === "Not run: the run reached its max_tool_calls (1)")).toHaveLength(1);
    expect(response.output_text).toMatch(
      /current_time returned: .*\ncurrent_time returned: Not run: the run reached its max_tool_calls \(1\)/,
    );
  });
});
