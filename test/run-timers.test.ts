import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { SessionCore } from "../src/session/session-core";
import { createAgent } from "./support/http";
import { postRun, type Run } from "./support/runs";

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
  runInDurableObject(stubOf(sessionId), (_instance, state) => state.storage.sql.exec<{ name: string }>("SELECT name FROM timers").toArray().map((t) => t.name));

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
});
