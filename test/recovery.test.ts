import { abortAllDurableObjects, createScheduledController, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../src/index";
import { api, createAgent } from "./support/http";
import { SseReader } from "./support/events";
import { mirrorCaughtUp } from "./support/run-queue";
import { HOLD_MODEL, postRun, transcriptOf, type Run } from "./support/runs";
import { callsReceived, openGate } from "./support/tool-server";

const stubOf = (sessionId: string) => env.SESSION.get(env.SESSION.idFromName(`default/${sessionId}`));

/**
 * An agent with two webhook tools on one bucket of the test tool server: `first` answers at once,
 * `second` is held at the bucket's gate until the test opens it.
 */
async function multiStepAgent(bucket: string) {
  const webhook = (name: string, action: string) => ({
    type: "webhook",
    name,
    parameters: { type: "object", properties: {} },
    url: `${env.TOOL_SERVER_URL}/${action}/${bucket}`,
  });
  return createAgent({ tools: [webhook("first", "echo"), webhook("second", "gate")] });
}

/** Starts a three-step background run (two webhook steps, then the answer). */
async function startLongRun(agentId: string) {
  const response = await postRun(agentId, { input: "[[tool first {}]] [[tool second {}]] go", background: true });
  return response.json<{ run_id: string; session_id: string }>();
}

/**
 * Waits until the run is inside its second webhook call: the first tool's result is recorded and
 * the tool server holds the second call at its gate, so the run is mid-run for as long as the test wants.
 */
const inSecondToolCall = (bucket: string) => callsReceived(bucket, 2);

/**
 * The resumed run sent `second` again (the tool server waits for its third call): proof that
 * whatever the test triggered brought the run back before the test itself touched the object.
 */
const resumedBy = (bucket: string) => callsReceived(bucket, 3);

/** The status of the run in the D1 mirror, once the object has copied what its runs wrote. */
async function mirroredStatus(sessionId: string, runId: string): Promise<string | undefined> {
  await mirrorCaughtUp(sessionId);
  return (await env.DB.prepare("SELECT status FROM runs WHERE id = ?").bind(runId).first<{ status: string }>())?.status;
}

/**
 * The run completed once: `first` ran once (its result was recorded before the crash), `second`
 * was in flight at the crash and was sent again with the same Idempotency-Key (docs/tools.md).
 */
async function expectCompletedOnce(agentId: string, runId: string, sessionId: string, bucket: string) {
  const run = await (await api(`/v1/agents/${agentId}/runs/${runId}?wait=20`)).json<Run>();
  expect(run.status).toBe("completed");
  expect(run.output).toBe('You said: go\nfirst returned: {"echo":{}}\nsecond returned: gate opened');
  const calls = await callsReceived<{ body: { name: string }; idempotency_key: string }>(bucket);
  expect(calls.map((c) => c.body.name)).toEqual(["first", "second", "second"]);
  expect(calls[2]!.idempotency_key).toBe(calls[1]!.idempotency_key);
  expect((await transcriptOf(sessionId)).map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "tool", "assistant"]);
}

describe("recovery after a crash", () => {
  it("resumes a run whose object was reset mid-run from its last persisted step", async () => {
    const bucket = crypto.randomUUID();
    const agent = await multiStepAgent(bucket);
    const { run_id, session_id } = await startLongRun(agent.id);
    await inSecondToolCall(bucket);
    await abortAllDurableObjects();
    await openGate(bucket);
    await expectCompletedOnce(agent.id, run_id, session_id, bucket);
  });
});

describe("the watchdog alarm", () => {
  it("resumes a run whose object died, with nothing but the object's own alarm", async () => {
    const bucket = crypto.randomUUID();
    const agent = await multiStepAgent(bucket);
    const { run_id, session_id } = await startLongRun(agent.id);
    await inSecondToolCall(bucket);
    await abortAllDurableObjects();
    await openGate(bucket);
    const stub = stubOf(session_id);
    // The watchdog is armed a minute ahead of every step: make it due, then ring the alarm as the platform would.
    const watchdog = await runInDurableObject(stub, (_i, state) => {
      const due = state.storage.sql.exec<{ due_at: number }>("SELECT due_at FROM timers WHERE name = 'watchdog'").toArray()[0]?.due_at;
      state.storage.sql.exec("UPDATE timers SET due_at = 0 WHERE name = 'watchdog'");
      return due;
    });
    expect(watchdog).toBeGreaterThan(Date.now());
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    await resumedBy(bucket);
    await expectCompletedOnce(agent.id, run_id, session_id, bucket);
    expect(await mirroredStatus(session_id, run_id)).toBe("completed");
  });
});

describe("the Cron trigger", () => {
  it("resumes a run stuck without progress", async () => {
    const bucket = crypto.randomUUID();
    const agent = await multiStepAgent(bucket);
    const { run_id, session_id } = await startLongRun(agent.id);
    await inSecondToolCall(bucket);
    await abortAllDurableObjects();
    await openGate(bucket);
    // Nobody touches the object: only the sweeper can bring the run back.
    await env.DB.prepare("UPDATE runs SET updated_at = '2000-01-01T00:00:00.000Z' WHERE id = ?").bind(run_id).run();
    await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "*/5 * * * *" }), env);
    await resumedBy(bucket);
    await expectCompletedOnce(agent.id, run_id, session_id, bucket);
    expect(await mirroredStatus(session_id, run_id)).toBe("completed");
  });

  it("ends a run that sweeps keep finding stuck, after MAX_RUN_SWEEPS", async () => {
    const agent = await createAgent();
    const held = new SseReader(await postRun(agent.id, { input: `${HOLD_MODEL} forever`, stream: true }));
    const { run_id, session_id } = (await held.until("model_request_started"))[0]!;
    await abortAllDurableObjects();
    await held.cancel().catch(() => {});
    await runInDurableObject(stubOf(session_id), (_i, state) => {
      const row = state.storage.sql.exec<{ body: string }>("SELECT body FROM runs WHERE id = ?", run_id).one();
      const body = { ...(JSON.parse(row.body) as Record<string, unknown>), sweeps: 3 };
      state.storage.sql.exec("UPDATE runs SET body = ? WHERE id = ?", JSON.stringify(body), run_id);
    });
    await abortAllDurableObjects();
    await env.DB.prepare("UPDATE runs SET updated_at = '2000-01-01T00:00:00.000Z' WHERE id = ?").bind(run_id).run();
    await worker.scheduled(createScheduledController({ scheduledTime: Date.now() }), env);
    const run = await (await api(`/v1/agents/${agent.id}/runs/${run_id}`)).json<Run>();
    expect(run.status).toBe("error");
    expect(run.error?.message).toMatch(/no progress after 3 recovery attempts/);
  });

  it("deletes events and idempotency keys past their retention", async () => {
    const old = "2000-01-01T00:00:00.000Z";
    const recent = new Date().toISOString();
    const session = `retention-${crypto.randomUUID()}`;
    await env.DB.batch([
      env.DB.prepare(
        "INSERT INTO events (tenant, session_id, seq, run_id, type, data, created_at) VALUES ('default', ?, 1, 'run_x', 'run_started', '{}', ?)",
      ).bind(session, old),
      env.DB.prepare(
        "INSERT INTO events (tenant, session_id, seq, run_id, type, data, created_at) VALUES ('default', ?, 2, 'run_x', 'run_completed', '{}', ?)",
      ).bind(session, recent),
      env.DB.prepare(
        "INSERT INTO idempotency_keys (tenant, key, fingerprint, result, created_at) VALUES ('default', ?, 'f', NULL, ?)",
      ).bind(`${session}-old`, old),
      env.DB.prepare(
        "INSERT INTO idempotency_keys (tenant, key, fingerprint, result, created_at) VALUES ('default', ?, 'f', NULL, ?)",
      ).bind(`${session}-new`, recent),
    ]);
    await worker.scheduled(createScheduledController({ scheduledTime: Date.now() }), env);
    const events = await env.DB.prepare("SELECT seq FROM events WHERE session_id = ?").bind(session).all<{ seq: number }>();
    expect(events.results.map((e) => e.seq)).toEqual([2]);
    const keys = await env.DB.prepare("SELECT key FROM idempotency_keys WHERE key LIKE ?").bind(`${session}%`).all<{ key: string }>();
    expect(keys.results.map((k) => k.key)).toEqual([`${session}-new`]);
  });

  it("rolls up today's usage", async () => {
    const agent = await createAgent({ prices: { input: 1, output: 1 } });
    const run = await (await postRun(agent.id, { input: "counted" })).json<Run>();
    await worker.scheduled(createScheduledController({ scheduledTime: Date.now() }), env);
    const today = new Date().toISOString().slice(0, 10);
    const usage = await (await api(`/v1/usage?from=${today}&to=${today}&agent_id=${agent.id}`)).json<{
      data: { runs: number; input_tokens: number }[];
    }>();
    expect(usage.data).toEqual([expect.objectContaining({ runs: 1, input_tokens: run.metrics.input_tokens })]);
  });

  it("prunes the object's own copy of the event log past its retention", async () => {
    const agent = await createAgent();
    const sessionId = `prune-${crypto.randomUUID()}`;
    const first = await (await postRun(agent.id, { input: "old", session_id: sessionId })).json<Run>();
    await runInDurableObject(stubOf(sessionId), (_i, state) => {
      state.storage.sql.exec("UPDATE events SET created_at = '2000-01-01T00:00:00.000Z' WHERE run_id = ?", first.id);
    });
    await postRun(agent.id, { input: "new", session_id: sessionId });
    const left = await runInDurableObject(stubOf(sessionId), (_i, state) =>
      state.storage.sql
        .exec<{ run_id: string }>("SELECT DISTINCT run_id FROM events")
        .toArray()
        .map((r) => r.run_id),
    );
    expect(left).not.toContain(first.id);
    expect(left).toHaveLength(1);
  });
});
