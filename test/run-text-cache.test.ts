import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { RunTextCache } from "../src/session/store/run-text-cache";
import type { SessionStore } from "../src/session/store/session-store";
import { createAgent } from "./support/http";
import { sessionStub } from "./support/held-d1";
import { runTurn } from "./support/runs";

type Instance = { core: { store: SessionStore } };

describe("run records read back from the object's storage", () => {
  it("are checked again once their stored text changes, even right after this instance wrote them", async () => {
    const agent = await createAgent();
    const sessionId = `runtext-${crypto.randomUUID()}`;
    const run = await runTurn(agent.id, { input: "one", session_id: sessionId });
    await runInDurableObject(sessionStub(sessionId), (instance, state) => {
      const { store } = (instance as unknown as Instance).core;
      const stored = store.getRun(run.id)!;
      expect(stored.status).toBe("completed");
      // The same text again: the same record, a copy of its own.
      const again = store.getRun(run.id)!;
      expect(again).toEqual(stored);
      expect(again).not.toBe(stored);
      store.putRun({ ...stored, metadata: { written: true } });
      expect(store.getRun(run.id)?.metadata).toEqual({ written: true });
      // A row changed under the instance is read and checked anew: a broken record is refused.
      state.storage.sql.exec("UPDATE runs SET body = json_set(body, '$.status', 'lost') WHERE id = ?", run.id);
      expect(() => store.getRun(run.id)).toThrow(`The stored record of run ${run.id} (object storage) is not a valid run`);
      // A write rolled back leaves the stored text, which is what is read.
      state.storage.sql.exec("UPDATE runs SET body = json_set(body, '$.status', 'completed') WHERE id = ?", run.id);
      expect(() =>
        state.storage.transactionSync(() => {
          store.putRun({ ...stored, status: "error" });
          throw new Error("rolled back");
        }),
      ).toThrow("rolled back");
      expect(store.getRun(run.id)?.status).toBe("completed");
    });
  });

  it("keeps a few texts, the newest, and none too long", () => {
    const cache = new RunTextCache();
    for (const id of ["a", "b", "c", "d", "e"]) cache.keep(id, `{"id":"${id}"}`);
    expect(cache.has("a", '{"id":"a"}')).toBe(false);
    expect(["b", "c", "d", "e"].every((id) => cache.has(id, `{"id":"${id}"}`))).toBe(true);
    expect(cache.has("e", '{"id":"other"}')).toBe(false);
    cache.keep("b", "x".repeat(300_000));
    expect(cache.has("b", "x".repeat(300_000))).toBe(false);
    expect(cache.has("b", '{"id":"b"}')).toBe(false);
  });
});
