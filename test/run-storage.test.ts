import { openRunBody, openRunInputs } from "../src/run-model/compact-run-body";
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
    expect((rows.once?.agent as { id: string } | undefined)?.id).toBe(agent.id);
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

/** The run's rows in the D1 mirror: its changing body and its write-once values (null when it has no such row). */
async function mirroredRows(runId: string): Promise<Rows> {
  const row = await env.DB.prepare("SELECT r.body AS body, i.body AS once FROM runs r LEFT JOIN run_inputs i ON i.id = r.id WHERE r.id = ?")
    .bind(runId)
    .first<{ body: string; once: string | null }>();
  return {
    // Its answer and checkpoints gzipped when large (src/run-model/compact-run-body.ts), opened here.
    body: JSON.parse(await openRunBody(row!.body)) as Record<string, unknown>,
    once: row!.once === null ? null : (JSON.parse(await openRunInputs(row!.once)) as Record<string, unknown>),
  };
}

const clientTool = { type: "client", name: "ask", description: "asks the user", parameters: { type: "object", properties: {} } };

describe("run storage in the D1 mirror", () => {
  it("keeps a finished run's answer and checkpoints gzipped, its metrics where D1's queries read them, and reads the run back whole", async () => {
    const agent = await createAgent();
    const run = await runTurn(agent.id, { input: "[[words 150]]" });
    expect(run.status).toBe("completed");
    // The mirror copied the finished run before the answer (its finish drains the outbox).
    const row = await env.DB.prepare("SELECT body, json_extract(body, '$.metrics.output_tokens') AS tokens FROM runs WHERE id = ?")
      .bind(run.id)
      .first<{ body: string; tokens: number }>();
    const body = JSON.parse(row!.body) as Record<string, unknown>;
    expect(body).toMatchObject({ status: "completed", _gz: expect.any(String) });
    expect(body).not.toHaveProperty("output");
    expect(body).not.toHaveProperty("checkpoints");
    expect(row!.tokens).toBe(run.metrics.output_tokens);
    const opened = JSON.parse(await openRunBody(row!.body)) as Record<string, unknown>;
    expect(opened.output).toEqual(run.output);
    expect(opened.checkpoints).toHaveLength(1);
    // Read from D1: the agent's run list; and from D1 again after the object's storage is gone (a rebuild).
    const listed = await (await api(`/v1/agents/${agent.id}/runs?limit=1`)).json<{ data: Run[] }>();
    expect(listed.data[0]).toMatchObject({ id: run.id, output: run.output });
    await runInDurableObject(stubOf(run.session_id), (_i, state) => state.storage.deleteAll());
    await abortAllDurableObjects();
    expect(await getRun(agent.id, run.id)).toEqual(run);
  });

  it("holds the write-once values in run_inputs, and the run's body only what changes", async () => {
    const agent = await createAgent({ instructions: "y".repeat(20_000) });
    const schema = { type: "object", properties: { word: { type: "string" } }, required: ["word"] };
    const run = await runTurn(agent.id, { input: '[[tool echo {"text":"a"}]] [[json {"word":"b"}]]', output_schema: schema });
    expect(run.status).toBe("completed");
    const rows = await mirroredRows(run.id);
    expect(rows.body).not.toHaveProperty("agent");
    expect(rows.body).not.toHaveProperty("input");
    expect(rows.body).not.toHaveProperty("output_schema");
    expect(JSON.stringify(rows.body).length).toBeLessThan(5_000);
    expect(rows.once).toMatchObject({ agent: { id: agent.id, instructions: "y".repeat(20_000) }, input: run.input, output_schema: schema });
    const listed = await (await api(`/v1/agents/${agent.id}/runs?session_id=${run.session_id}`)).json<{ data: Run[] }>();
    expect(listed.data.map((r) => [r.id, r.input, r.output])).toEqual([[run.id, run.input, run.output]]);
    expect(await getRun(agent.id, run.id)).toEqual(run);
  });

  it("rebuilds a session whose runs were mirrored before the split, and keeps their values when they change again", async () => {
    const agent = await createAgent({ tools: [clientTool] });
    const paused = await runTurn(agent.id, { input: "[[tool ask {}]] one question" });
    expect(paused.status).toBe("paused");
    // The mirror as it was before the split: the whole record in the body, no run_inputs row.
    const rows = await mirroredRows(paused.id);
    await env.DB.batch([
      env.DB.prepare("UPDATE runs SET body = ? WHERE id = ?").bind(JSON.stringify({ ...rows.body, ...rows.once }), paused.id),
      env.DB.prepare("DELETE FROM run_inputs WHERE id = ?").bind(paused.id),
    ]);
    await runInDurableObject(stubOf(paused.session_id), (_i, state) => state.storage.deleteAll());

    const callId = paused.required_actions[0]!.tool_call_id;
    const resumed = await api(`/v1/agents/${agent.id}/runs/${paused.id}/continue`, {
      body: { tool_results: [{ tool_call_id: callId, output: "yes" }] },
    });
    expect(resumed.status).toBe(200);
    const done = await resumed.json<Run>();
    expect(done.status).toBe("completed");
    expect(done.input).toEqual(paused.input);
    // The run's body changed again in D1; its write-once values were sent back first.
    const after = await mirroredRows(paused.id);
    expect(after.body).toMatchObject({ status: "completed" });
    expect(after.body).not.toHaveProperty("agent");
    expect(after.once).toMatchObject({ agent: { id: agent.id }, input: paused.input });
    expect(await getRun(agent.id, paused.id)).toEqual(done);
  });
});
