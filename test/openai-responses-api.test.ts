import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { api, createAgent, createTenantToken } from "./support/http";
import { agentryOpenAI } from "./support/openai-sdk";
import { transcriptOf } from "./support/runs";

describe("POST /v1/responses with the official openai SDK", () => {
  it("runs one blocking turn of the agent named by model, with usage from the run's metrics, and retrieves it", async () => {
    const agent = await createAgent();
    const client = agentryOpenAI();
    const response = await client.responses.create({ model: agent.id, input: "hello there", metadata: { ticket: "42" } });
    expect(response).toMatchObject({
      object: "response",
      status: "completed",
      model: agent.id,
      error: null,
      metadata: { ticket: "42" },
      output: [
        {
          type: "message",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: "You said: hello there", annotations: [] }],
        },
      ],
    });
    expect(response.output_text).toBe("You said: hello there");
    expect(response.id).toMatch(/^run_/);
    expect(response.usage?.input_tokens).toBeGreaterThan(0);
    expect(response.usage?.output_tokens).toBe(Math.ceil("You said: hello there".length / 4));
    expect(response.usage?.total_tokens).toBe((response.usage?.input_tokens ?? 0) + (response.usage?.output_tokens ?? 0));

    const run = await (await api(`/v1/agents/${agent.id}/runs/${response.id}`)).json<{
      session_id: string;
      metrics: { input_tokens: number };
    }>();
    expect(response.usage?.input_tokens).toBe(run.metrics.input_tokens);
    expect(response.conversation).toEqual({ id: run.session_id });

    const retrieved = await client.responses.retrieve(response.id);
    expect(retrieved).toMatchObject({ id: response.id, status: "completed", usage: response.usage, output: response.output });
  });

  it("adds the request's instructions to the agent's for that run only", async () => {
    const agent = await createAgent({ instructions: "Be brief." });
    const client = agentryOpenAI();
    const response = await client.responses.create({ model: agent.id, input: "hi", instructions: "Answer in French." });
    expect(response.status).toBe("completed");
    const stored = await (await api(`/v1/agents/${agent.id}`)).json<{ instructions: string; version: number }>();
    expect(stored).toMatchObject({ instructions: "Be brief.", version: 1 });
  });

  it("refuses, in OpenAI's error shape, only what Agentry cannot serve, naming the field and the reason, and stores nothing", async () => {
    const agent = await createAgent();
    const client = agentryOpenAI();
    const refusals: [Record<string, unknown>, string, string][] = [
      [{ tools: [{ type: "web_search" }] }, "tools[0].type", "web_search tools are not served"],
      [{ prompt: { id: "pmpt_1" } }, "prompt", "prompt templates are not served"],
      [{ top_logprobs: 5 }, "top_logprobs", "log probabilities are not served"],
      [{ input: [{ type: "web_search_call", id: "ws_1", status: "completed" }] }, "input[0].type", "web_search_call items are not served"],
      [{ input: [{ role: "user", content: [{ type: "input_image", file_id: "file_1" }] }] }, "input[0].content[0].file_id", "no Files API"],
      [
        { temperature: 0.5 },
        "temperature",
        "is not taken by provider mock: Anthropic's Messages API (version 2026-10-21) has no sampling settings",
      ],
      [{ unknown_field: 1 }, "unknown_field", "unknown field"],
      [
        { tools: [{ type: "function", name: "f", parameters: { type: "object", properties: { a: { type: "strng" } } } }] },
        "tools[0].parameters",
        "properties.a.type is not valid JSON Schema",
      ],
    ];
    for (const [fields, param, reason] of refusals) {
      const error = await client.responses.create({ model: agent.id, input: "hi", ...fields } as never).catch((e: unknown) => e);
      expect(error, param).toBeInstanceOf(OpenAI.BadRequestError);
      const bad = error as InstanceType<typeof OpenAI.BadRequestError>;
      expect(bad.status).toBe(400);
      expect(bad.error).toMatchObject({ type: "invalid_request_error", param });
      expect((bad.error as { message: string }).message, param).toContain(`${param}: `);
      expect((bad.error as { message: string }).message, param).toContain(reason);
      expect(Object.keys(bad.error as object).sort(), param).toEqual(["code", "message", "param", "type"]);
    }
    const runs = await (await api(`/v1/agents/${agent.id}/runs`)).json<{ data: unknown[] }>();
    expect(runs.data).toEqual([]);
  });

  it("answers an unknown agent, an unknown response and a wrong key with OpenAI's error classes", async () => {
    const client = agentryOpenAI();
    await expect(client.responses.create({ model: "no-such-agent", input: "hi" })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(client.responses.retrieve("run_nothing")).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const unauthorized = await agentryOpenAI("wrong-key")
      .responses.retrieve("run_nothing")
      .catch((e: unknown) => e);
    expect(unauthorized).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((unauthorized as InstanceType<typeof OpenAI.AuthenticationError>).error).toMatchObject({
      type: "invalid_request_error",
      code: "invalid_api_key",
      param: null,
    });
  });

  it("keeps another tenant's responses out of reach", async () => {
    const agent = await createAgent();
    const response = await agentryOpenAI().responses.create({ model: agent.id, input: "mine" });
    const other = agentryOpenAI(await createTenantToken());
    await expect(other.responses.retrieve(response.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(other.responses.create({ model: agent.id, input: "hi" })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it("sends a user message item's parts as the turn's input", async () => {
    const agent = await createAgent();
    const response = await agentryOpenAI().responses.create({
      model: agent.id,
      input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "parts" }] }],
    });
    expect(response.output_text).toBe("You said: parts");
    const run = await (await api(`/v1/agents/${agent.id}/runs/${response.id}`)).json<{ session_id: string }>();
    const transcript = await transcriptOf(run.session_id);
    expect(transcript[0]).toMatchObject({ role: "user", content: [{ type: "text", text: "parts" }] });
  });
});
