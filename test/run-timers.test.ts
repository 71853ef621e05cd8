import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { SessionCore } from "../src/session/object/session-core";
import { storedEvents } from "./support/events";
import { api, createAgent } from "./support/http";
import { postRun, runTurn, type Run } from "./support/runs";

const stubOf = (sessionId: string) => env.SESSION.get(env.SESSION.idFromName(`default/${sessionId}`));
const coreOf = (instance: unknown) => (instance as { core: SessionCore }).core;

/**
 * Holds the object's D1 mirror copies until `release()`; `reached()` resolves once the first one has
 * started. Both go through the object: a promise settled in another context would carry that context.
 */
async function holdMirror(sessionId: string) {
  let release = () => {};
  let reach = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  const reached = new Promise<void>((resolve) => (reach = resolve));
  await runInDurableObject(stubOf(sessionId), (instance) => {
    const core = coreOf(instance);
    const drain = core.drainOutbox.bind(core);
    core.drainOutbox = async () => {
      reach();
      await gate;
      return drain();
    };
  });
  return {
    reached: () => runInDurableObject(stubOf(sessionId), () => reached),
    release: () => runInDurableObject(stubOf(sessionId), () => release()),
  };
}

const timersOf = (sessionId: string) =>
  runInDurableObject(stubOf(sessionId), (_instance, state) =>
    state.storage.sql
      .exec<{ name: string }>("SELECT name FROM timers")
      .toArray()
      .map((t) => t.name),
  );

describe("a run's timers", () => {
  it("arms a foreground run's watchdog with its creation, before the first copy to D1", async () => {
    const agent = await createAgent();
    const sessionId = `watchdog-${crypto.randomUUID()}`;
    const mirror = await holdMirror(sessionId);
    const posting = postRun(agent.id, { input: "hello", session_id: sessionId });
    await mirror.reached();
    // The run is stored and running; should the object die now, its watchdog alarm resumes it.
    expect(await timersOf(sessionId)).toContain("watchdog");
    await mirror.release();
    expect((await (await posting).json<Run>()).status).toBe("completed");
  });

  it("emits run_continued for a background fork that starts after an eviction", async () => {
    const agent = await createAgent();
    const sessionId = `fork-${crypto.randomUUID()}`;
    const source = await runTurn(agent.id, { input: "first", session_id: sessionId });
    // The fork's queue message is kept from the queue: the object's fallback timer starts it.
    await runInDurableObject(stubOf(sessionId), (instance) => {
      coreOf(instance).enqueue = async () => {};
    });
    const response = await api(`/v1/agents/${agent.id}/runs/${source.id}/continue`, { body: { input: "again", background: true } });
    expect(response.status).toBe(202);
    const { run_id } = await response.json<{ run_id: string }>();
    await evictDurableObject(stubOf(sessionId));
    await runInDurableObject(stubOf(sessionId), (_instance, state) =>
      state.storage.sql.exec("UPDATE timers SET due_at = 0 WHERE name = 'queue_fallback'"),
    );
    expect(await runDurableObjectAlarm(stubOf(sessionId))).toBe(true);
    const run = await (await api(`/v1/agents/${agent.id}/runs/${run_id}?wait=30`)).json<Run>();
    expect(run.status).toBe("completed");
    const types = (await storedEvents(agent.id, run_id)).map((e) => e.type);
    expect(types.slice(0, 2)).toEqual(["run_started", "run_continued"]);
  });
});
