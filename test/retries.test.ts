import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { SseReader } from "./support/events";
import { api, createAgent } from "./support/http";
import { postRun, readEvents, runTurn, type Run } from "./support/runs";
import { callsReceived } from "./support/tool-server";

const stubOf = (sessionId: string) => env.SESSION.get(env.SESSION.idFromName(`default/${sessionId}`));
const retrying = { retries: 3, delay_between_retries: 0.05 };

/** Starts a background run and returns once its stream shows the `retry` event: the run waits on its alarm. */
async function waitingForRetry(agentId: string, input: string) {
  const stream = new SseReader(await postRun(agentId, { input, background: true, stream: true }));
  const { run_id, session_id } = (await stream.until("retry"))[0]!;
  return { run_id, session_id, stream };
}

describe("retries", () => {
  it("retries a retryable failure on the same run, with a retry event before each wait", async () => {
    const agent = await createAgent(retrying);
    const events = await readEvents(await postRun(agent.id, { input: "[[fail 529 x2]] eventually", stream: true }));
    const retries = events.filter((e) => e.type === "retry");
    expect(retries.map((e) => e.data)).toEqual([
      { step: 1, attempt: 1, delay_ms: 50, error: expect.objectContaining({ type: "overloaded", status: 529 }) },
      { step: 1, attempt: 2, delay_ms: 50, error: expect.objectContaining({ type: "overloaded", status: 529 }) },
    ]);
    const started = events.filter((e) => e.type === "model_request_started").map((e) => e.data.attempt);
    expect(started).toEqual([1, 2, 3]);
    const done = events.at(-1);
    expect(done).toMatchObject({ type: "run_completed", data: { output: "You said: eventually" } });
    const run = await (await api(`/v1/agents/${agent.id}/runs/${events[0]!.run_id}`)).json<Run>();
    expect(run).toMatchObject({ status: "completed", attempts: 3 });
    expect(run.metrics).toMatchObject({ retries: 2, model_calls: 1 });
    expect(new Set(events.map((e) => e.run_id)).size).toBe(1);
  });

  it("waits delay · 2^(k−1) with exponential backoff", async () => {
    const agent = await createAgent({ retries: 3, delay_between_retries: 0.05, exponential_backoff: true });
    const events = await readEvents(await postRun(agent.id, { input: "[[fail 500 x3]] backoff", stream: true }));
    expect(events.filter((e) => e.type === "retry").map((e) => e.data.delay_ms)).toEqual([50, 100, 200]);
    expect(events.at(-1)?.type).toBe("run_completed");
  });

  it("honours a longer retry-after from the provider", async () => {
    const agent = await createAgent(retrying);
    const events = await readEvents(await postRun(agent.id, { input: "[[fail 429 x1 retry-after=1]] slow down", stream: true }));
    expect(events.find((e) => e.type === "retry")?.data).toMatchObject({ delay_ms: 1000, error: { type: "rate_limited", status: 429 } });
    expect(events.at(-1)?.type).toBe("run_completed");
  });

  it("shares one budget per run and then ends with the error", async () => {
    const agent = await createAgent({ retries: 2, delay_between_retries: 0.01 });
    const run = await runTurn(agent.id, { input: "[[fail 503 x5]] never" });
    expect(run).toMatchObject({ status: "error", attempts: 3, error: { type: "provider_error", status: 503, retryable: true } });
    expect(run.metrics.retries).toBe(2);
  });

  it("never retries a permanent error", async () => {
    const agent = await createAgent(retrying);
    for (const [input, type] of [
      ["[[fail 401 x1]]", "auth_error"],
      ["[[quota]]", "quota_exceeded"],
      ["[[context_overflow]]", "context_window_exceeded"],
      ["[[fail 400 x1]]", "provider_error"],
    ] as const) {
      const run = await runTurn(agent.id, { input });
      expect(run, input).toMatchObject({ status: "error", attempts: 1, error: { type, retryable: false } });
    }
  });

  it.each(["anthropic", "openai", "openai-chat"])(
    "retries an error frame in the middle of a %s stream, and never a permanent one",
    async (provider) => {
      const overloaded = provider === "anthropic" ? "overloaded_error" : "server_error";
      const agent = await createAgent({ ...retrying, provider, base_url: "mock:" });
      const run = await runTurn(agent.id, { input: `[[stream_error ${overloaded}]] one two three four` });
      expect(run).toMatchObject({ status: "completed", attempts: 2, output: "You said: one two three four" });
      const refused = await runTurn(agent.id, { input: "[[stream_error invalid_request_error]] one two three four" });
      expect(refused).toMatchObject({ status: "error", attempts: 1, error: { type: "provider_error", retryable: false } });
    },
  );

  it("retries a stream cut before its end", async () => {
    const agent = await createAgent(retrying);
    const run = await runTurn(agent.id, { input: "[[cut]] cut me off" });
    expect(run).toMatchObject({ status: "completed", attempts: 2, output: "You said: cut me off" });
  });

  it("keeps completed tool results across a retry: the webhook runs once", async () => {
    const bucket = crypto.randomUUID();
    const agent = await createAgent({
      ...retrying,
      tools: [
        { type: "webhook", name: "charge", parameters: { type: "object", properties: {} }, url: `${env.TOOL_SERVER_URL}/echo/${bucket}` },
      ],
    });
    const run = await runTurn(agent.id, { input: "[[tool charge {}]] [[fail 500 x1]] pay" });
    expect(run).toMatchObject({ status: "completed", attempts: 3 });
    expect(run.metrics).toMatchObject({ model_calls: 2, tool_calls: 1, retries: 2 });
    expect(await callsReceived(bucket)).toHaveLength(1);
  });

  it("waits on the object's alarm: an object that dies during the wait still retries", async () => {
    const agent = await createAgent({ retries: 1, delay_between_retries: 30 });
    const accepted = await waitingForRetry(agent.id, "[[fail 529 x1]] after the wait");
    let stub = stubOf(accepted.session_id);
    const run = await (await api(`/v1/agents/${agent.id}/runs/${accepted.run_id}`)).json<Run>();
    expect(run).toMatchObject({ status: "running", attempts: 2 });
    const retryAt = await runInDurableObject(
      stub,
      (_i, state) => state.storage.sql.exec<{ due_at: number }>("SELECT due_at FROM timers WHERE name = 'retry'").toArray()[0]?.due_at,
    );
    expect(retryAt).toBeGreaterThan(Date.now() + 20_000);
    // A graceful eviction would wait for the run's open stream, which lasts the whole wait: reset the object instead.
    await abortAllDurableObjects();
    await accepted.stream.cancel().catch(() => {});
    // Stubs made before a reset reject: the platform would use a new one.
    stub = stubOf(accepted.session_id);
    // Make the 30 s wait due now, then ring the alarm as the platform would.
    await runInDurableObject(stub, (_i, state) => state.storage.sql.exec("UPDATE timers SET due_at = 0 WHERE name = 'retry'"));
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const done = await (await api(`/v1/agents/${agent.id}/runs/${accepted.run_id}?wait=10`)).json<Run>();
    expect(done).toMatchObject({ status: "completed", attempts: 2, output: "You said: after the wait" });
  });

  it("clears the wait when the run is cancelled during it", async () => {
    const agent = await createAgent({ retries: 1, delay_between_retries: 30 });
    const accepted = await waitingForRetry(agent.id, "[[fail 529 x1]] cancelled in the wait");
    const cancelled = await (await api(`/v1/agents/${agent.id}/runs/${accepted.run_id}/cancel`, { method: "POST" })).json<Run>();
    expect(cancelled.status).toBe("cancelled");
    expect((await accepted.stream.rest()).at(-1)?.type).toBe("run_cancelled");
    const timers = await runInDurableObject(stubOf(accepted.session_id), (_i, state) =>
      state.storage.sql
        .exec<{ name: string }>("SELECT name FROM timers")
        .toArray()
        .map((t) => t.name),
    );
    expect(timers).not.toContain("retry");
    expect(await runDurableObjectAlarm(stubOf(accepted.session_id))).toBe(false);
    expect((await (await api(`/v1/agents/${agent.id}/runs/${accepted.run_id}`)).json<Run>()).status).toBe("cancelled");
  });
});

describe("max_cost_usd", () => {
  it("ends the run with budget_exceeded once its cost passes the limit, making no further call", async () => {
    const agent = await createAgent({
      tools: [{ type: "builtin", name: "current_time" }],
      prices: { input: 1_000_000, output: 0 },
      max_cost_usd: 5,
    });
    const events = await readEvents(await postRun(agent.id, { input: "[[tool current_time {}]] expensive", stream: true }));
    const completed = events.filter((e) => e.type === "model_request_completed");
    expect(completed).toHaveLength(1);
    const usage = completed[0]!.data.usage as { input_tokens: number };
    expect(completed[0]!.data.cost_usd).toBe(usage.input_tokens);
    expect(completed[0]!.data).toMatchObject({ duration_ms: expect.any(Number), time_to_first_token_ms: expect.any(Number) });
    expect(events.at(-1)).toMatchObject({ type: "run_error", data: { error: { type: "budget_exceeded", retryable: false } } });
    expect(events.map((e) => e.type)).not.toContain("tool_call_started");
  });

  it("reports each call's cost and the run's total from the agent's prices", async () => {
    const agent = await createAgent({ prices: { input: 2, output: 10 } });
    const run = await runTurn(agent.id, { input: "priced" });
    const expected = (run.metrics.input_tokens * 2 + run.metrics.output_tokens * 10) / 1_000_000;
    expect(run.metrics.cost_usd).toBeCloseTo(expected, 12);
  });
});
