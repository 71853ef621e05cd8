import { describe, expect, it } from "vitest";
import type { Block, Message } from "../src/core/messages";
import { promptCacheKey } from "../src/providers/cache-key";
import { toResponsesInput } from "../src/providers/openai-responses-input";
import { api, createAgent, expectInvalid } from "./support/http";
import { TINY_PNG } from "./support/media";
import { runTurn, transcriptOf, type Run } from "./support/runs";

/** An agent on the Responses adapter against the strict offline model; `gpt-5-mini` reasons. */
const responsesAgent = (fields: Record<string, unknown> = {}) =>
  createAgent({
    provider: "openai",
    base_url: "mock:",
    model: "gpt-5-mini",
    tools: [{ type: "builtin", name: "current_time" }],
    ...fields,
  });
const patchAgent = (id: string, body: Record<string, unknown>) => api(`/v1/agents/${id}`, { method: "PATCH", body });
const blocksOf = (messages: Awaited<ReturnType<typeof transcriptOf>>, role: string) =>
  messages.filter((m) => m.role === role).map((m) => m.content);

describe("Responses sessions on a reasoning model", () => {
  it("runs tool calls, final texts, an image and structured output over turns, sending reasoning back before the items that followed it", async () => {
    const agent = await responsesAgent();
    const first = await runTurn(agent.id, { input: "[[tool current_time {}]] what time is it" });
    expect(first).toMatchObject({ status: "completed" });
    expect(first.output).toMatch(/^You said: what time is it\ncurrent_time returned: /);
    expect(first.metrics.reasoning_tokens).toBeGreaterThan(0);
    const second = await runTurn(agent.id, { input: "and now?", session_id: first.session_id });
    expect(second).toMatchObject({ status: "completed", output: "You said: and now?" });
    const third = await runTurn(agent.id, {
      input: [
        { type: "text", text: "[[tool current_time {}]] once more" },
        { type: "image", media_type: "image/png", data: TINY_PNG },
      ],
      session_id: first.session_id,
    });
    expect(third.status).toBe("completed");
    const schema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"], additionalProperties: false };
    const structured = await runTurn(agent.id, { input: "as JSON", session_id: first.session_id, output_schema: schema });
    expect(structured).toMatchObject({ status: "completed", output: { answer: "sample" } });

    const assistant = blocksOf(await transcriptOf(first.session_id), "assistant");
    expect(assistant.map((blocks) => blocks.map((b) => b.type))).toEqual([
      ["reasoning", "tool_call"],
      ["reasoning", "text"],
      ["reasoning", "text"],
      ["reasoning", "tool_call"],
      ["reasoning", "text"],
      ["reasoning", "text"],
    ]);
    const [, answer] = assistant[1]!;
    expect(assistant[1]![0]).toMatchObject({
      provider: "openai",
      provider_data: { id: expect.stringMatching(/^rs_/), encrypted_content: expect.stringMatching(/^gAAAAA/) },
    });
    expect(answer).toMatchObject({ type: "text", provider_data: { id: expect.stringMatching(/^msg_/) } });
  });

  it("ends a turn whose budget went on reasoning as output_truncated, and the next turn goes on", async () => {
    const agent = await responsesAgent();
    const spent = await runTurn(agent.id, { input: "[[truncate 0]] think hard" });
    expect(spent).toMatchObject({ status: "error", output: "", error: { type: "output_truncated" } });
    expect(spent.metrics.reasoning_tokens).toBeGreaterThan(0);
    const next = await runTurn(agent.id, { input: "[[tool current_time {}]] then", session_id: spent.session_id });
    expect(next.status).toBe("completed");
  });

  it("compacts a session with tool steps and goes on", async () => {
    const agent = await responsesAgent({ compaction: { enabled: false, trigger_tokens: 100000, keep_last_messages: 2 } });
    const first = await runTurn(agent.id, { input: "[[tool current_time {}]] a" });
    for (const input of ["[[words 50]] b", "[[tool current_time {}]] c"]) {
      expect((await runTurn(agent.id, { input, session_id: first.session_id })).status).toBe("completed");
    }
    const compacted = await api(`/v1/sessions/${first.session_id}/compact`, { method: "POST" });
    expect(compacted.status).toBe(200);
    expect(await compacted.json()).toMatchObject({ summary: "You said: Summarise the conversation above." });
    const next = await runTurn(agent.id, { input: "d", session_id: first.session_id });
    expect(next).toMatchObject({ status: "completed", output: "You said: d" });
  });

  it("takes a client-chosen session id of 128 characters (the prompt_cache_key is a 64-character hash)", async () => {
    const agent = await responsesAgent({ model: "gpt-4o-mini" });
    const sessionId = `s${"x".repeat(127)}`;
    const run = await runTurn(agent.id, { input: "hello", session_id: sessionId });
    expect(run).toMatchObject({ status: "completed", output: "You said: hello", session_id: sessionId });
  });

  it("derives one stable 64-character key per tenant and session", async () => {
    const key = await promptCacheKey("tenant-a", "s".repeat(128));
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(await promptCacheKey("tenant-a", "s".repeat(128))).toBe(key);
    expect(await promptCacheKey("tenant-b", "s".repeat(128))).not.toBe(key);
    expect(await promptCacheKey("tenant-a", "s".repeat(127))).not.toBe(key);
  });

  it("forks onto anthropic and back: foreign reasoning is dropped on the way, OpenAI's own goes back", async () => {
    const agent = await responsesAgent();
    const run = await runTurn(agent.id, { input: "[[tool current_time {}]] [[tool current_time {}]] two" });
    expect(run.status).toBe("completed");
    const checkpoints = (await (await api(`/v1/agents/${agent.id}/runs/${run.id}/checkpoints`)).json<{ data: { id: string }[] }>()).data;
    expect((await patchAgent(agent.id, { provider: "anthropic", model: "claude-sonnet-4-5" })).status).toBe(200);
    const fork = await (
      await api(`/v1/agents/${agent.id}/runs/${run.id}/continue`, {
        body: { continue_from: checkpoints[0]!.id, input: "[[tool current_time {}]] on anthropic" },
      })
    ).json<Run>();
    expect(fork).toMatchObject({ status: "completed", parent_run_id: run.id });
    expect(fork.output).toMatch(/^You said: on anthropic\ncurrent_time returned: /);

    expect((await patchAgent(agent.id, { provider: "openai", model: "gpt-5-mini" })).status).toBe(200);
    const back = await runTurn(agent.id, { input: "[[tool current_time {}]] back on openai", session_id: run.session_id });
    expect(back.status).toBe("completed");
    expect(back.output).toMatch(/^You said: back on openai\ncurrent_time returned: /);
    const again = await runTurn(agent.id, { input: "last", session_id: run.session_id });
    expect(again).toMatchObject({ status: "completed", output: "You said: last" });
  });
});

describe("max_output_tokens on openai agents", () => {
  it("refuses less than 16, the Responses API's minimum, on create and on a PATCH that makes it so", async () => {
    await expectInvalid(
      await api("/v1/agents", { body: { provider: "openai", base_url: "mock:", model: "gpt-5-mini", max_output_tokens: 15 } }),
      "max_output_tokens",
      /at least 16/,
    );
    const small = await createAgent({ provider: "anthropic", base_url: "mock:", max_output_tokens: 8 });
    await expectInvalid(await patchAgent(small.id, { provider: "openai" }), "max_output_tokens", /at least 16/);
    const agent = await responsesAgent({ max_output_tokens: 16 });
    expect(await runTurn(agent.id, { input: "hi" })).toMatchObject({ status: "completed", output: "You said: hi" });
  });
});

describe("Responses input from the neutral transcript", () => {
  const rs = (id: string, encrypted?: string): Block => ({
    type: "reasoning",
    text: "",
    provider: "openai",
    provider_data: { id, summary: [], ...(encrypted ? { encrypted_content: encrypted } : {}) },
  });
  const said = (text: string, id: string, phase?: string): Block => ({
    type: "text",
    text,
    provider_data: { id, ...(phase ? { phase } : {}) },
  });
  const called = (callId: string, id: string): Block => ({
    type: "tool_call",
    tool_call_id: callId,
    name: "get_time",
    arguments: {},
    provider_data: { id },
  });
  const history: Message[] = [
    { role: "user", content: [{ type: "text", text: "hi" }] },
    { role: "assistant", content: [rs("rs_1", "gAAAAAB1"), said("one", "msg_1", "final_answer"), said("two", "msg_1", "final_answer")] },
    { role: "user", content: [{ type: "text", text: "time?" }] },
    {
      role: "assistant",
      content: [
        { type: "reasoning", text: "claude", provider: "anthropic", provider_data: { signature: "s" } },
        rs("rs_2", "gAAAAAB2"),
        called("call_2", "fc_2"),
      ],
    },
    { role: "tool", content: [{ type: "tool_result", tool_call_id: "call_2", output: "noon", is_error: false }] },
    // Stored before requests were stateless: no encrypted content to send back.
    { role: "assistant", content: [rs("rs_3"), said("three", "msg_3")] },
  ];
  const message = (id: string, texts: string[], phase?: string) => ({
    type: "message",
    id,
    role: "assistant",
    status: "completed",
    content: texts.map((text) => ({ type: "output_text", text, annotations: [] })),
    ...(phase ? { phase } : {}),
  });

  it("on a reasoning model: each reasoning item with its encrypted content, right before the item that followed it", () => {
    expect(toResponsesInput(history, {}, { reasoning: true })).toEqual([
      { type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] },
      { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "gAAAAAB1" },
      message("msg_1", ["one", "two"], "final_answer"),
      { type: "message", role: "user", content: [{ type: "input_text", text: "time?" }] },
      { type: "reasoning", id: "rs_2", summary: [], encrypted_content: "gAAAAAB2" },
      { type: "function_call", id: "fc_2", call_id: "call_2", name: "get_time", arguments: "{}" },
      { type: "function_call_output", call_id: "call_2", output: "noon" },
      { type: "message", role: "assistant", content: "three" },
    ]);
  });

  it("on another model, or when the item that followed is gone, no reasoning and no ids that point at it", () => {
    const items = toResponsesInput(history, {}, { reasoning: false });
    expect(items.filter((item) => item.type === "reasoning")).toEqual([]);
    expect(items[1]).toEqual({ type: "message", role: "assistant", content: "one\n\ntwo" });
    expect(items[3]).toEqual({ type: "function_call", call_id: "call_2", name: "get_time", arguments: "{}" });
    // A cancelled step's call is not sent (src/session/transcript/message-parts.ts): its reasoning goes with it.
    const cancelled: Message[] = [history[0]!, { role: "assistant", content: [rs("rs_4", "gAAAAAB4")] }];
    expect(toResponsesInput(cancelled, {}, { reasoning: true })).toEqual([
      { type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] },
    ]);
  });
});
