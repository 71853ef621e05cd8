import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { createAgent, api } from "./support/http";
import { SseReader, storedEvents } from "./support/events";
import { holdD1Batch, sessionStub, writesRunStatus } from "./support/held-d1";
import { postRun, type Run, type RunEvent } from "./support/runs";
import { callsReceived, gateTool, openGate } from "./support/tool-server";
import { mirroredEventRows } from "./support/mirror";

/** Makes the object's watchdog due and rings its alarm, as the platform would after an eviction. */
async function ringWatchdog(sessionId: string): Promise<void> {
  const stub = sessionStub(sessionId);
  await runInDurableObject(stub, (_i, state) => {
    state.storage.sql.exec("UPDATE timers SET due_at = 0 WHERE name = 'watchdog'");
  });
  expect(await runDurableObjectAlarm(stub)).toBe(true);
}

/** The run once it has stopped (`?wait=`). */
const finalRun = async (agentId: string, runId: string) => (await api(`/v1/agents/${agentId}/runs/${runId}?wait=20`)).json<Run>();

/** Seqs one after another, with no gap and no duplicate. */
const contiguous = (events: RunEvent[]) => events.every((e, i) => i === 0 || e.seq === events[i - 1]!.seq + 1);

describe("events are durable before anyone sees them", () => {
  it("keeps every event a client saw when the object is reset mid-run, in order, opening with run_started", async () => {
    const bucket = crypto.randomUUID();
    const agent = await createAgent({ tools: [gateTool(bucket, "second")] });
    const client = new SseReader(await postRun(agent.id, { input: "[[tool second {}]] go", stream: true }));
    const seen = await client.until("tool_call_started");
    const { run_id, session_id } = seen[0]!;
    await callsReceived(bucket, 1);
    expect(seen.map((e) => e.type).slice(0, 2)).toEqual(["run_started", "model_request_started"]);

    await abortAllDurableObjects();
    await client.cancel().catch(() => {});
    await openGate(bucket);
    await ringWatchdog(session_id);
    expect((await finalRun(agent.id, run_id)).status).toBe("completed");

    const log = await storedEvents(agent.id, run_id);
    expect(log.slice(0, seen.length)).toEqual(seen);
    expect(log[0]!.type).toBe("run_started");
    expect(log.filter((e) => e.type === "run_started")).toHaveLength(1);
    expect(contiguous(log)).toBe(true);
    expect(log.at(-1)!.type).toBe("run_completed");
  });

  it("opens a resumed run's log with run_started when the object died before the run's first event", async () => {
    const agent = await createAgent();
    const sessionId = `opening-${crypto.randomUUID()}`;
    // The run's creation is committed in the object; the object dies while its row goes to D1, before begin().
    const bucket = crypto.randomUUID();
    await holdD1Batch(sessionId, writesRunStatus("running"), bucket);
    const request = postRun(agent.id, { input: "hello", session_id: sessionId });
    await callsReceived(bucket, 1);
    await abortAllDurableObjects();
    await request; // the reset ends the request (the client sees an error answer)
    await openGate(bucket);

    const runId = await runInDurableObject(sessionStub(sessionId), (_i, state) => {
      const row = state.storage.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = 'active_run_id'").one();
      const events = state.storage.sql.exec("SELECT seq FROM events").toArray();
      expect(events).toEqual([]);
      return row.value;
    });
    await ringWatchdog(sessionId);
    // The run is found by its id once the resumed object's first copy to D1 holds its row (the
    // creation's copy died with the object): until then GET answers 404.
    await vi.waitFor(async () => expect((await api(`/v1/agents/${agent.id}/runs/${runId}`)).status).toBe(200), { timeout: 10_000 });
    const run = await finalRun(agent.id, runId);
    expect(run.status).toBe("completed");
    expect(run.output).toBe("You said: hello");

    const log = await storedEvents(agent.id, runId);
    expect(log.map((e) => e.type)).toEqual([
      "run_started",
      "model_request_started",
      ...log.slice(2, -3).map((e) => e.type),
      "model_request_completed",
      "checkpoint",
      "run_completed",
    ]);
    expect(log[0]!.data).toEqual({ agent_id: agent.id, agent_version: agent.version });
    expect(contiguous(log)).toBe(true);
  });

  it("announces a run's end that the object committed and died before announcing, once, on the alarm", async () => {
    const agent = await createAgent();
    const sessionId = `unannounced-${crypto.randomUUID()}`;
    // The run's end is committed in the object; the object dies while the end goes to D1, before its terminal event.
    const bucket = crypto.randomUUID();
    await holdD1Batch(sessionId, writesRunStatus("completed"), bucket);
    const request = postRun(agent.id, { input: "hello", session_id: sessionId });
    await callsReceived(bucket, 1);
    await abortAllDurableObjects();
    await request; // the reset ends the request (the client sees an error answer)
    await openGate(bucket);

    const runId = await runInDurableObject(sessionStub(sessionId), (_i, state) => {
      const meta = (key: string) =>
        state.storage.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = ?", key).toArray()[0]?.value ?? null;
      expect(JSON.parse(meta("unannounced") ?? "null")).toMatchObject({ status: "completed" });
      // The end armed the outbox timer before the object died: its alarm rings.
      state.storage.sql.exec("UPDATE timers SET due_at = 0 WHERE name = 'outbox'");
      return (JSON.parse(meta("unannounced") ?? "{}") as { run_id: string }).run_id;
    });
    expect(await runDurableObjectAlarm(sessionStub(sessionId))).toBe(true);
    const run = await finalRun(agent.id, runId);
    expect(run.status).toBe("completed");
    const log = await storedEvents(agent.id, runId);
    expect(log.filter((e) => e.type === "run_completed")).toEqual([
      expect.objectContaining({ data: expect.objectContaining({ output: "You said: hello" }) }),
    ]);
    expect(log.at(-1)?.type).toBe("run_completed");
    expect(contiguous(log)).toBe(true);
    // Announced once: another entry announces nothing more.
    await postRun(agent.id, { input: "again", session_id: sessionId });
    expect((await storedEvents(agent.id, runId)).filter((e) => e.type === "run_completed")).toHaveLength(1);
  });

  it("stores the streamed pieces released together as one row, and reads every one of them back", async () => {
    const agent = await createAgent();
    const response = await postRun(agent.id, { input: "[[words 40]]" });
    const run = await response.json<Run>();
    const log = await storedEvents(agent.id, run.id);
    expect(log.filter((e) => e.type === "content_delta").length).toBeGreaterThanOrEqual(40);
    expect(contiguous(log)).toBe(true);
    const rows = await runInDurableObject(sessionStub(run.session_id), (_i, state) =>
      state.storage.sql.exec<{ type: string }>("SELECT type FROM events WHERE run_id = ?", run.id).toArray(),
    );
    expect(rows.some((row) => row.type === "event_pack")).toBe(true);
    expect(rows.length).toBeLessThan(log.length / 2);
  });

  it("copies the stored events to D1 from the object's log, above the mirrored mark", async () => {
    const agent = await createAgent();
    const response = await postRun(agent.id, { input: "mirror me" });
    const run = await response.json<Run>();
    const log = await storedEvents(agent.id, run.id);
    await runInDurableObject(sessionStub(run.session_id), async (instance) => {
      await (instance as unknown as { core: { flushed: () => Promise<void> } }).core.flushed();
    });
    const mirrored = await mirroredEventRows("run_id", run.id);
    expect(mirrored.map((e) => ({ seq: e.seq, type: e.type }))).toEqual(log.map((e) => ({ seq: e.seq, type: e.type })));
    // D1 holds them in packs, one per copy of the log (a row costs a write for itself and one per index).
    const { results } = await env.DB.prepare("SELECT type FROM events WHERE run_id = ?").bind(run.id).all<{ type: string }>();
    expect(new Set(results.map((r) => r.type))).toEqual(new Set(["event_pack_gz"]));
    expect(results.length).toBeLessThan(log.length / 2);
    const mark = await runInDurableObject(
      sessionStub(run.session_id),
      (_i, state) => state.storage.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = 'events_mirrored'").one().value,
    );
    expect(Number(mark)).toBe(log.at(-1)!.seq);
  });
});
