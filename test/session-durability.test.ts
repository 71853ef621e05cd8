import { abortAllDurableObjects, evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, createAgent } from "./support/http";
import { runTurn, transcriptOf } from "./support/runs";

const stubOf = (sessionId: string) => env.SESSION.get(env.SESSION.idFromName(`default/${sessionId}`));

/** The input tokens a fresh session spends on `input`: the baseline a turn with history exceeds. */
async function freshInputTokens(agentId: string, input: string): Promise<number> {
  return (await runTurn(agentId, { input })).metrics.input_tokens;
}

describe("a session survives its object", () => {
  it("rebuilds the conversation from D1 when the object's storage is wiped between turns", async () => {
    const agent = await createAgent();
    const sessionId = `wipe-${crypto.randomUUID()}`;
    const first = await runTurn(agent.id, { input: "remember the word apricot", session_id: sessionId });

    await runInDurableObject(stubOf(sessionId), async (_instance, state) => {
      await state.storage.deleteAll();
      expect(state.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table'").toArray()).toEqual([]);
    });

    const second = await runTurn(agent.id, { input: "what word?", session_id: sessionId });
    expect(second.status).toBe("completed");
    // The second model call carried the first turn: it is larger than the same turn in a new session.
    expect(second.metrics.input_tokens).toBeGreaterThan(await freshInputTokens(agent.id, "what word?"));
    const transcript = await transcriptOf(sessionId);
    expect(transcript.map((m) => [m.index, m.role, m.run_id])).toEqual([
      [0, "user", first.id],
      [1, "assistant", first.id],
      [2, "user", second.id],
      [3, "assistant", second.id],
    ]);
    expect(transcript[0]?.content).toEqual([{ type: "text", text: "remember the word apricot" }]);
    const session = await (await api(`/v1/sessions/${sessionId}`)).json<{ run_count: number; head_run_id: string }>();
    expect(session).toMatchObject({ run_count: 2, head_run_id: second.id });
  });

  it("loses nothing when the object is evicted between turns", async () => {
    const agent = await createAgent();
    const sessionId = `evict-${crypto.randomUUID()}`;
    await runTurn(agent.id, { input: "one", session_id: sessionId });
    await evictDurableObject(stubOf(sessionId));
    await runTurn(agent.id, { input: "two", session_id: sessionId });
    const transcript = await transcriptOf(sessionId);
    expect(transcript.map((m) => m.content)).toEqual([
      [{ type: "text", text: "one" }],
      [{ type: "text", text: "You said: one" }],
      [{ type: "text", text: "two" }],
      [{ type: "text", text: "You said: two" }],
    ]);
  });

  it("loses nothing when every object is aborted between turns, and old stubs are replaced", async () => {
    const agent = await createAgent();
    const sessionId = `abort-${crypto.randomUUID()}`;
    await runTurn(agent.id, { input: "alpha", session_id: sessionId });
    await abortAllDurableObjects();
    const second = await runTurn(agent.id, { input: "beta", session_id: sessionId });
    expect(second.status).toBe("completed");
    expect((await transcriptOf(sessionId)).map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
  });

  it("keeps its history when the agent switches provider between turns", async () => {
    const agent = await createAgent({ provider: "mock" });
    const sessionId = `switch-${crypto.randomUUID()}`;
    await runTurn(agent.id, { input: "[[tool current_time {}]] first", session_id: sessionId });
    for (const provider of ["openai", "openai-chat", "anthropic"]) {
      const patched = await api(`/v1/agents/${agent.id}`, { method: "PATCH", body: { provider, base_url: "mock:" } });
      expect(patched.status).toBe(200);
      const run = await runTurn(agent.id, { input: `on ${provider}`, session_id: sessionId });
      expect(run.status).toBe("completed");
      expect(run.output).toBe(`You said: on ${provider}`);
      expect(run.metrics.input_tokens).toBeGreaterThan(await freshInputTokens(agent.id, `on ${provider}`));
    }
    const transcript = await transcriptOf(sessionId);
    expect(transcript.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
  });
});
