import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, createAgent } from "./support/http";
import { postRun, readEvents, runTurn, transcriptOf, type Run } from "./support/runs";
import { callsReceived } from "./support/tool-server";

type RecordedCall = {
  body: { tool_call_id: string; name: string; arguments: unknown; run_id: string; session_id: string };
  idempotency_key: string | null;
  signature_valid: boolean;
};

const bucket = () => crypto.randomUUID();
const webhook = (name: string, url: string, extra: Record<string, unknown> = {}) => ({
  type: "webhook",
  name,
  description: `the ${name} tool`,
  parameters: { type: "object", properties: { city: { type: "string" } } },
  url,
  ...extra,
});

describe("webhook tools", () => {
  it("POSTs a signed call with the tool_call_id as Idempotency-Key and gives the model the answer", async () => {
    const b = bucket();
    const agent = await createAgent({ tools: [webhook("get_weather", `${env.TOOL_SERVER_URL}/echo/${b}`)] });
    const run = await runTurn(agent.id, { input: '[[tool get_weather {"city":"Paris"}]] weather?' });
    expect(run.status).toBe("completed");
    expect(run.output).toBe('You said: weather?\nget_weather returned: {"echo":{"city":"Paris"}}');
    expect(run.metrics).toMatchObject({ model_calls: 2, tool_calls: 1 });
    const calls = await callsReceived<RecordedCall>(b);
    expect(calls).toHaveLength(1);
    const [call] = calls;
    expect(call?.signature_valid).toBe(true);
    expect(call?.idempotency_key).toBe(call?.body.tool_call_id);
    expect(call?.body).toMatchObject({ name: "get_weather", arguments: { city: "Paris" }, run_id: run.id, session_id: run.session_id });

    const transcript = await transcriptOf(run.session_id);
    expect(transcript.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(transcript[2]?.content).toEqual([
      { type: "tool_result", tool_call_id: call?.body.tool_call_id, output: '{"echo":{"city":"Paris"}}', is_error: false },
    ]);
  });

  it("turns a non-2xx answer into a tool error the model sees", async () => {
    const b = bucket();
    const agent = await createAgent({ tools: [webhook("boom", `${env.TOOL_SERVER_URL}/fail/${b}`)] });
    const response = await postRun(agent.id, { input: "[[tool boom {}]]", stream: true });
    const events = await readEvents(response);
    const error = events.find((e) => e.type === "tool_call_error");
    expect(error?.data).toMatchObject({ name: "boom", error: "Webhook answered HTTP 500: tool exploded" });
    expect(events.at(-1)?.type).toBe("run_completed");
    expect(events.at(-1)?.data.output).toBe("boom returned: Webhook answered HTTP 500: tool exploded");
    const transcript = await transcriptOf(events[0]!.session_id);
    expect(transcript[2]?.content[0]).toMatchObject({ type: "tool_result", is_error: true });
  });

  it("times out a slow webhook after its timeout_ms", async () => {
    const b = bucket();
    const agent = await createAgent({ tools: [webhook("slow", `${env.TOOL_SERVER_URL}/slow/${b}?ms=3000`, { timeout_ms: 200 })] });
    const run = await runTurn(agent.id, { input: "[[tool slow {}]]" });
    expect(run.status).toBe("completed");
    expect(run.output).toBe("slow returned: Webhook timed out after 200 ms");
  });

  it("executes parallel tool calls and returns all results in one message", async () => {
    const b = bucket();
    const agent = await createAgent({
      tools: [webhook("a", `${env.TOOL_SERVER_URL}/echo/${b}`), webhook("b", `${env.TOOL_SERVER_URL}/echo/${b}`)],
    });
    const run = await runTurn(agent.id, { input: '[[parallel]] [[tool a {"city":"A"}]] [[tool b {"city":"B"}]] both' });
    expect(run.status).toBe("completed");
    expect(run.output).toBe('You said: both\na returned: {"echo":{"city":"A"}}\nb returned: {"echo":{"city":"B"}}');
    expect(run.metrics).toMatchObject({ model_calls: 2, tool_calls: 2 });
    expect(await callsReceived<RecordedCall>(b)).toHaveLength(2);
    const transcript = await transcriptOf(run.session_id);
    expect(transcript.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(transcript[1]?.content.filter((c) => c.type === "tool_call")).toHaveLength(2);
    expect(transcript[2]?.content.map((c) => c.type)).toEqual(["tool_result", "tool_result"]);
  });
});

describe("builtin tools", () => {
  it("answers current_time from inside the Worker", async () => {
    const agent = await createAgent({ tools: [{ type: "builtin", name: "current_time" }] });
    const before = Date.now();
    const run = await runTurn(agent.id, { input: "[[tool current_time {}]]" });
    const match = /^current_time returned: \{"utc":"([^"]+)"\}$/.exec(String(run.output));
    expect(match).not.toBeNull();
    expect(Date.parse(match![1]!)).toBeGreaterThanOrEqual(before - 1000);
  });
});

describe("client tools", () => {
  it("pauses the run with required_actions and resumes it in place with the results", async () => {
    const agent = await createAgent({
      tools: [
        { type: "client", name: "ask_user", description: "ask", parameters: { type: "object", properties: { q: { type: "string" } } } },
      ],
    });
    const paused = await runTurn(agent.id, { input: '[[tool ask_user {"q":"name?"}]] hello' });
    expect(paused.status).toBe("paused");
    expect(paused.required_actions).toHaveLength(1);
    const action = paused.required_actions[0]!;
    expect(action).toMatchObject({ name: "ask_user", arguments: { q: "name?" } });

    const missing = await api(`/v1/agents/${agent.id}/runs/${paused.id}/continue`, { body: { tool_results: [] } });
    expect(missing.status).toBe(400);
    const unknown = await api(`/v1/agents/${agent.id}/runs/${paused.id}/continue`, {
      body: { tool_results: [{ tool_call_id: "nope", output: "x" }] },
    });
    expect(unknown.status).toBe(400);
    expect((await unknown.json<{ error: { details: { fields: { path: string }[] } } }>()).error.details.fields[0]?.path).toBe(
      "tool_results.0.tool_call_id",
    );

    const resumed = await api(`/v1/agents/${agent.id}/runs/${paused.id}/continue`, {
      body: { tool_results: [{ tool_call_id: action.tool_call_id, output: "Ada" }] },
    });
    expect(resumed.status).toBe(200);
    const run = await resumed.json<Run>();
    expect(run).toMatchObject({
      id: paused.id,
      status: "completed",
      output: "You said: hello\nask_user returned: Ada",
      required_actions: [],
    });
    expect(run.metrics).toMatchObject({ model_calls: 2, tool_calls: 1 });

    // Sent again: the run as it is, nothing done twice (docs/tools.md).
    const again = await api(`/v1/agents/${agent.id}/runs/${paused.id}/continue`, {
      body: { tool_results: [{ tool_call_id: action.tool_call_id, output: "Ada" }] },
    });
    expect(again.status).toBe(200);
    expect(await again.json<Run>()).toMatchObject({ id: paused.id, status: "completed", metrics: { model_calls: 2, tool_calls: 1 } });
  });

  it("streams a continued run: run_continued, then the rest, then one terminal event", async () => {
    const agent = await createAgent({ tools: [{ type: "client", name: "confirm", parameters: { type: "object", properties: {} } }] });
    const first = await readEvents(await postRun(agent.id, { input: "[[tool confirm {}]]", stream: true }));
    expect(first.at(-1)?.type).toBe("run_paused");
    const actions = first.at(-1)?.data.required_actions as { tool_call_id: string }[];
    const runId = first[0]!.run_id;
    const response = await api(`/v1/agents/${agent.id}/runs/${runId}/continue`, {
      body: { tool_results: [{ tool_call_id: actions[0]!.tool_call_id, output: "yes" }], stream: true },
    });
    const events = await readEvents(response);
    expect(events[0]?.type).toBe("run_continued");
    expect(events.at(-1)?.type).toBe("run_completed");
    expect(events[0]!.seq).toBeGreaterThan(first.at(-1)!.seq);
  });
});
