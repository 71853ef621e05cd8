import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createAgent } from "../support/http";
import { runTurn } from "../support/runs";

/** The marker of test/node/log-secrets.ts (LOG_CANARY): this file runs in workerd and cannot import the Node side. */
const LOG_CANARY = "reliability-log-canary";

describe("log capture", () => {
  it("the scan of every console line sees the Worker's own lines, written inside a Durable Object", async () => {
    const agent = await createAgent();
    const sessionId = `${LOG_CANARY}-${crypto.randomUUID()}`;
    await runTurn(agent.id, { input: "one", session_id: sessionId });
    // A wiped object rebuilds from D1 on its next turn and logs `session_rebuilt` with the session id;
    // the reliability reporter fails the run when that line did not reach `onConsoleLog`.
    await runInDurableObject(env.SESSION.get(env.SESSION.idFromName(`default/${sessionId}`)), (_i, state) => state.storage.deleteAll());
    const second = await runTurn(agent.id, { input: "two", session_id: sessionId });
    expect(second.status).toBe("completed");
  });
});
