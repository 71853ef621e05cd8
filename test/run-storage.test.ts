import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, createAgent } from "./support/http";
import { runTurn, type Run } from "./support/runs";

const stubOf = (sessionId: string) => env.SESSION.get(env.SESSION.idFromName(`default/${sessionId}`));

type Rows = { body: Record<string, unknown>; once: Record<string, unknown> | null };

/** The run's two rows in the object's SQLite: its changing body and its write-once values. */
const storedRows = (sessionId: string, runId: string) =>
  runInDurableObject(stubOf(sessionId), (_i, state): Rows => {
    const body = state.storage.sql.exec<{ body: string }>("SELECT body FROM runs WHERE id = ?", runId).one().body;
    const once = state.storage.sql.exec<{ body: string }>("SELECT body FROM run_inputs WHERE id = ?", runId).toArray()[0]?.body;
    return { body: JSON.parse(body) as Record<string, unknown>, once: once ? (JSON.parse(once) as Record<string, unknown>) : null };
  });

const getRun = async (agentId: string, runId: string) => (await api(`/v1/agents/${agentId}/runs/${runId}`)).json<Run>();

describe("run storage in the session object", () => {
  it("writes the agent snapshot, input and output schema once, in their own row, and each step only the changing body", async () => {
    const agent = await createAgent({ instructions: "x".repeat(20_000) });
    const run = await runTurn(agent.id, { input: "[[tool ask_user {}]] hold on" });
    const rows = await storedRows(run.session_id, run.id);
    expect(rows.body).not.toHaveProperty("agent");
    expect(rows.body).not.toHaveProperty("input");
    expect(rows.body).not.toHaveProperty("output_schema");
    expect(JSON.stringify(rows.body).length).toBeLessThan(5_000);
    expect((rows.once?.agent as { id: string }).id).toBe(agent.id);
    expect(rows.once?.input).toEqual(run.input);
    expect((await getRun(agent.id, run.id)).input).toEqual(run.input);
  });

  it("reads a run stored before the split (everything in its body) and continues its session", async () => {
    const agent = await createAgent();
    const first = await runTurn(agent.id, { input: "hello there" });
    await runInDurableObject(stubOf(first.session_id), (_i, state) => {
      const body = state.storage.sql.exec<{ body: string }>("SELECT body FROM runs WHERE id = ?", first.id).one().body;
      const once = state.storage.sql.exec<{ body: string }>("SELECT body FROM run_inputs WHERE id = ?", first.id).one().body;
      const whole = { ...(JSON.parse(body) as object), ...(JSON.parse(once) as object) };
      state.storage.sql.exec("UPDATE runs SET body = ? WHERE id = ?", JSON.stringify(whole), first.id);
      state.storage.sql.exec("DELETE FROM run_inputs WHERE id = ?", first.id);
    });
    await abortAllDurableObjects();
    const read = await getRun(agent.id, first.id);
    expect(read.input).toEqual(first.input);
    expect(read.output).toEqual(first.output);
    const second = await runTurn(agent.id, { input: "again", session_id: first.session_id });
    expect(second.status).toBe("completed");
  });
});
