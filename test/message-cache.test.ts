import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MessageCache, type ReadMessage } from "../src/session/store/message-cache";
import type { SessionStore, StoredMessage } from "../src/session/store/session-store";
import { createAgent } from "./support/http";
import { runTurn, transcriptOf } from "./support/runs";

const stubOf = (sessionId: string) => env.SESSION.get(env.SESSION.idFromName(`default/${sessionId}`));
type Instance = { core: { store: SessionStore } };

describe("the session's parsed messages, kept between steps", () => {
  it("forgets a message whose transaction rolled back, even one read inside it", async () => {
    const agent = await createAgent();
    const sessionId = `cache-${crypto.randomUUID()}`;
    const first = await runTurn(agent.id, { input: "one", session_id: sessionId });
    await runInDurableObject(stubOf(sessionId), (instance, state) => {
      const { store } = (instance as unknown as Instance).core;
      expect(store.messages().map((m) => m.index)).toEqual([0, 1]);
      expect(() =>
        state.storage.transactionSync(() => {
          store.appendMessage({
            index: 2,
            run_id: first.id,
            role: "user",
            content: [{ type: "text", text: "never" }],
            created_at: new Date().toISOString(),
          });
          expect(store.messages().map((m) => m.index)).toEqual([0, 1, 2]);
          throw new Error("rolled back");
        }),
      ).toThrow("rolled back");
      expect(store.messages().map((m) => m.index)).toEqual([0, 1]);
    });
    const second = await runTurn(agent.id, { input: "two", session_id: sessionId });
    expect(second.status).toBe("completed");
    expect((await transcriptOf(sessionId)).map((m) => m.content)).toEqual([
      [{ type: "text", text: "one" }],
      [{ type: "text", text: "You said: one" }],
      [{ type: "text", text: "two" }],
      [{ type: "text", text: "You said: two" }],
    ]);
  });

  it("hands out messages no caller can change", async () => {
    const agent = await createAgent();
    const sessionId = `cache-frozen-${crypto.randomUUID()}`;
    await runTurn(agent.id, { input: "one", session_id: sessionId });
    await runInDurableObject(stubOf(sessionId), (instance) => {
      const [message] = (instance as unknown as Instance).core.store.messages();
      expect(() => {
        (message!.content[0] as { text: string }).text = "changed";
      }).toThrow(TypeError);
      expect(() => (message!.content as unknown[]).push({ type: "text", text: "more" })).toThrow(TypeError);
    });
    expect((await transcriptOf(sessionId))[0]?.content).toEqual([{ type: "text", text: "one" }]);
  });
});

describe("MessageCache", () => {
  const message = (index: number): StoredMessage => ({
    index,
    run_id: "run_1",
    role: "user",
    content: [{ type: "text", text: `m${index}` }],
    created_at: "",
  });
  /** A storage of `count` messages of 40 characters each, counting how many it parses. */
  const storage = (count: () => number) => {
    let parsed = 0;
    const readAfter = (after: number): ReadMessage[] =>
      Array.from({ length: Math.max(0, count() - after - 1) }, (_, i) => {
        parsed += 1;
        return { message: message(after + 1 + i), chars: 40 };
      });
    return { readAfter, parsed: () => parsed };
  };

  it("parses each message once while the session fits", () => {
    let count = 3;
    const store = storage(() => count);
    const cache = new MessageCache(1_000);
    expect(cache.all(count - 1, store.readAfter).map((m) => m.index)).toEqual([0, 1, 2]);
    count = 5;
    expect(cache.all(count - 1, store.readAfter).map((m) => m.index)).toEqual([0, 1, 2, 3, 4]);
    expect(cache.all(count - 1, store.readAfter)).toHaveLength(5);
    expect(store.parsed()).toBe(5);
  });

  it("keeps nothing of a session over its bound: every read parses it whole, and is right", () => {
    let count = 3;
    const store = storage(() => count);
    const cache = new MessageCache(100);
    expect(cache.all(count - 1, store.readAfter).map((m) => m.index)).toEqual([0, 1, 2]);
    count = 4;
    expect(cache.all(count - 1, store.readAfter).map((m) => m.index)).toEqual([0, 1, 2, 3]);
    expect(cache.all(count - 1, store.readAfter).map((m) => m.index)).toEqual([0, 1, 2, 3]);
    expect(store.parsed()).toBe(3 + 4 + 4);
  });
});
