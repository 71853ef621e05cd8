import { env } from "cloudflare:workers";
import OpenAI from "openai";
import { CONVERSATION_START } from "../src/providers/anthropic-messages";
import type { FunctionTool, ResponseInputItem } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import { api, createAgent } from "./support/http";
import { TINY_PNG } from "./support/media";
import { agentryOpenAI } from "./support/openai-sdk";
import { requestsOf, upstreamBase } from "./support/upstreams";

type Transcript = { data: { role: string; content: { type: string; text?: string; tool_call_id?: string; output?: string }[] }[] };

/** A session's transcript as [role, each block's text, call id or output] pairs. */
async function transcriptOf(agentId: string, responseId: string) {
  const run = await (await api(`/v1/agents/${agentId}/runs/${responseId}`)).json<{ session_id: string }>();
  const transcript = await (await api(`/v1/sessions/${run.session_id}/transcript`)).json<Transcript>();
  return transcript.data.map((m) => [m.role, m.content.map((b) => b.text ?? b.output ?? b.tool_call_id ?? b.type).join("|")]);
}

const weather: FunctionTool = {
  type: "function",
  name: "get_weather",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
  strict: true,
};

describe("conversations brought by the client on /v1/responses", () => {
  it("seeds a new session with the earlier turns, resolving item references to a response's output items", async () => {
    const agent = await createAgent({ tools: [{ type: "builtin", name: "current_time" }] });
    const client = agentryOpenAI();
    const ask = "[[tool current_time {}]] time?";
    const first = await client.responses.create({ model: agent.id, input: ask });
    const ids = first.output.map((item) => item.id as string);
    expect(first.output.map((item) => item.type)).toEqual(["function_call", "function_call_output", "message"]);
    expect(ids[0]).toMatch(/^fc_run_[0-9a-z]+_toolu_/);
    const input: ResponseInputItem[] = [
      { role: "user", content: ask },
      ...ids.map((id) => ({ type: "item_reference" as const, id })),
      { role: "user", content: "thanks" },
    ];
    const next = await client.responses.create({ model: agent.id, input });
    expect(next.output_text).toBe("You said: thanks");
    expect(next.conversation?.id).not.toBe(first.conversation?.id);
    const callId = first.output[0]?.type === "function_call" ? first.output[0].call_id : "";
    const time = first.output[1]?.type === "function_call_output" ? first.output[1].output : "";
    expect(await transcriptOf(agent.id, next.id)).toEqual([
      ["user", ask],
      ["assistant", callId],
      ["tool", time],
      ["assistant", first.output_text],
      ["user", "thanks"],
      ["assistant", "You said: thanks"],
    ]);
  });

  it("takes system and developer messages as the run's instructions, and assistant messages as history", async () => {
    const agent = await createAgent({ instructions: "Agent rules." });
    const response = await agentryOpenAI().responses.create({
      model: agent.id,
      instructions: "Request rules.",
      input: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "hi" },
        { role: "assistant", content: "Hello! How can I help?" },
        { role: "developer", content: [{ type: "input_text", text: "Answer in English." }] },
        { role: "user", content: "second" },
      ],
    });
    expect(response).toMatchObject({ output_text: "You said: second", instructions: "Request rules.\n\nBe brief.\n\nAnswer in English." });
    expect(await transcriptOf(agent.id, response.id)).toEqual([
      ["user", "hi"],
      ["assistant", "Hello! How can I help?"],
      ["user", "second"],
      ["assistant", "You said: second"],
    ]);
  });

  it("takes a conversation that opens with the assistant: Anthropic gets a user message before it", async () => {
    const bucket = crypto.randomUUID();
    const agent = await createAgent({
      provider: "anthropic",
      model: "claude-test",
      base_url: upstreamBase(env.GATEWAY_URL, bucket, "anthropic"),
    });
    const response = await agentryOpenAI().responses.create({
      model: agent.id,
      input: [
        { role: "assistant", content: "Hello! How can I help?" },
        { role: "user", content: "hi" },
      ],
    });
    expect(response.output_text).toBe("You said: hi");
    const [sent] = await requestsOf(env.GATEWAY_URL, bucket);
    expect((sent?.body as { messages: unknown[] } | undefined)?.messages.slice(0, 2)).toEqual([
      { role: "user", content: [{ type: "text", text: CONVERSATION_START }] },
      { role: "assistant", content: [{ type: "text", text: "Hello! How can I help?" }] },
    ]);
  });

  it("stores the images of earlier turns with the seeded session, and refuses a bad one naming its part", async () => {
    const agent = await createAgent();
    const client = agentryOpenAI();
    const picture = { type: "input_image" as const, image_url: `data:image/png;base64,${TINY_PNG}`, detail: "auto" as const };
    const earlier: ResponseInputItem[] = [
      { role: "user", content: [{ type: "input_text", text: "look" }, picture] },
      { role: "assistant", content: "A tiny picture." },
    ];
    const response = await client.responses.create({ model: agent.id, input: [...earlier, { role: "user", content: "and now?" }] });
    expect(response.output_text).toBe("You said: and now?");
    const run = await (await api(`/v1/agents/${agent.id}/runs/${response.id}`)).json<{ session_id: string }>();
    const transcript = await (await api(`/v1/sessions/${run.session_id}/transcript`)).json<{
      data: { role: string; content: Record<string, unknown>[] }[];
    }>();
    expect(transcript.data[0]?.content).toEqual([
      { type: "text", text: "look" },
      { type: "image", media_type: "image/png", media_id: expect.stringMatching(/^med_/), size: 70, width: 1, height: 1 },
    ]);
    const bad = { ...picture, image_url: "data:image/png;base64,AAAA" };
    const error = await client.responses
      .create({
        model: agent.id,
        input: [{ role: "user", content: [{ type: "input_text", text: "x" }, bad] }, earlier[1]!, { role: "user", content: "y" }],
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ param: "input[0].content[1]" });
  });

  it("continues the paused response whose calls the resent history answers, without previous_response_id", async () => {
    const agent = await createAgent();
    const client = agentryOpenAI();
    const ask = '[[tool get_weather {"city":"Lima"}]] weather?';
    const paused = await client.responses.create({ model: agent.id, input: ask, tools: [weather] });
    const call = paused.output[0];
    if (call?.type !== "function_call") throw new Error("expected a function_call");
    const resent: ResponseInputItem[] = [
      { role: "user", content: ask },
      call,
      { type: "function_call_output", call_id: call.call_id, output: "mild" },
    ];
    const wrong = await client.responses
      .create({ model: agent.id, input: [resent[0]!, { ...call, arguments: '{"city":"Quito"}' }, resent[2]!], tools: [weather] })
      .catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(OpenAI.BadRequestError);
    expect((wrong as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ param: "input[1]" });
    const answered = await client.responses.create({ model: agent.id, input: resent, tools: [weather] });
    expect(answered).toMatchObject({ id: paused.id, status: "completed", output_text: "You said: weather?\nget_weather returned: mild" });
    // Sent again (no Idempotency-Key): the response no longer waits, and no new session runs the turn again.
    const again = await client.responses.create({ model: agent.id, input: resent, tools: [weather] }).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(OpenAI.BadRequestError);
    expect((again as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ param: "input[2].call_id" });
    expect((await (await api(`/v1/agents/${agent.id}/runs`)).json<{ data: unknown[] }>()).data).toHaveLength(1);
  });

  it("refuses, naming the item, what would break the seeded session, and stores nothing", async () => {
    const agent = await createAgent();
    const client = agentryOpenAI();
    const cases: [ResponseInputItem[], string, string][] = [
      [
        [
          { role: "user", content: "a" },
          { type: "function_call", call_id: "c1", name: "f", arguments: "{}" },
          { role: "user", content: "b" },
        ],
        "input[1]",
        "no function_call_output",
      ],
      [
        [
          { role: "user", content: "a" },
          { type: "function_call", call_id: "c1", name: "f", arguments: "{bad" },
          { type: "function_call_output", call_id: "c1", output: "x" },
          { role: "user", content: "b" },
        ],
        "input[1].arguments",
        "JSON",
      ],
      [
        [
          { role: "user", content: "a" },
          { type: "item_reference", id: "msg_run_nosuchrun" },
          { role: "user", content: "b" },
        ],
        "input[1].id",
        "no output item",
      ],
      [
        [
          { role: "user", content: "a" },
          { type: "function_call", call_id: "c1", name: "f", arguments: "5" },
          { type: "function_call_output", call_id: "c1", output: "x" },
          { role: "user", content: "b" },
        ],
        "input[1].arguments",
        "JSON object",
      ],
      [
        [
          { role: "user", content: "a" },
          { type: "function_call", call_id: "c1", name: "f", arguments: `${"[".repeat(200)}${"]".repeat(200)}` },
          { type: "function_call_output", call_id: "c1", output: "x" },
          { role: "user", content: "b" },
        ],
        "input[1].arguments",
        "nests deeper",
      ],
      [
        [
          { role: "user", content: "a" },
          { role: "assistant", content: "b" },
        ],
        "input[1]",
        "must end with a user message",
      ],
    ];
    for (const [input, param, reason] of cases) {
      const error = await client.responses.create({ model: agent.id, input }).catch((e: unknown) => e);
      expect(error, param).toBeInstanceOf(OpenAI.BadRequestError);
      const body = (error as InstanceType<typeof OpenAI.BadRequestError>).error as { param: string; message: string };
      expect(body.param, param).toBe(param);
      expect(body.message, param).toContain(reason);
    }
    expect((await (await api(`/v1/agents/${agent.id}/runs`)).json<{ data: unknown[] }>()).data).toEqual([]);
  });
});
