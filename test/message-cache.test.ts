import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { SessionStore } from "../src/session/store/session-store";
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
          store.appendMessage({ index: 2, run_id: first.id, role: "user", content: [{ type: "text", text: "never" }], created_at: new Date().toISOString() });
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
