import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { SessionStore } from "../src/session/store/session-store";
import { api, createAgent } from "./support/http";
import { postRun, readEvents } from "./support/runs";

const stubOf = (sessionId: string) => env.SESSION.get(env.SESSION.idFromName(`default/${sessionId}`));
const streamTurn = async (agentId: string, input: string, sessionId: string) =>
  readEvents(await postRun(agentId, { input, session_id: sessionId, stream: true }));
const seqs = (events: { seq: number }[]) => events.map((e) => e.seq);
const consecutiveFrom = (first: number, count: number) => Array.from({ length: count }, (_, i) => first + i);

describe("a session's event seq", () => {
  it("goes on from the last one after its stored events are pruned and the object restarts", async () => {
    const agent = await createAgent();
    const sessionId = `seq-prune-${crypto.randomUUID()}`;
    const first = await streamTurn(agent.id, "one", sessionId);
    expect(seqs(first)).toEqual(consecutiveFrom(1, first.length));
    // Every event mirrored and past its retention: the object's copy of the log is emptied.
    await runInDurableObject(stubOf(sessionId), async (instance, state) => {
      const core = (instance as unknown as { core: { store: SessionStore; flush(): Promise<void> } }).core;
      await core.flush();
      core.store.pruneEvents(new Date(Date.now() + 86_400_000).toISOString());
      expect(state.storage.sql.exec("SELECT count(*) AS n FROM events").one().n).toBe(0);
    });
    await abortAllDurableObjects();
    const second = await streamTurn(agent.id, "two", sessionId);
    expect(seqs(second)).toEqual(consecutiveFrom(first.length + 1, second.length));
  });

  it("goes on from the last one after a restart when the events before were not stored", async () => {
    const agent = await createAgent({ store_events: false });
    const sessionId = `seq-unstored-${crypto.randomUUID()}`;
    const first = await streamTurn(agent.id, "one", sessionId);
    expect(seqs(first)).toEqual(consecutiveFrom(1, first.length));
    await abortAllDurableObjects();
    expect((await api(`/v1/agents/${agent.id}`, { method: "PATCH", body: { store_events: true } })).status).toBe(200);
    const second = await streamTurn(agent.id, "two", sessionId);
    expect(seqs(second)).toEqual(consecutiveFrom(first.length + 1, second.length));
    await abortAllDurableObjects();
    const third = await streamTurn(agent.id, "three", sessionId);
    expect(seqs(third)).toEqual(consecutiveFrom(first.length + second.length + 1, third.length));
  });
});
