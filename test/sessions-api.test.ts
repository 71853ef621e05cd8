import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, createAgent } from "./support/http";
import { SseReader } from "./support/events";
import { HOLD_MODEL, postRun, runTurn, transcriptOf, type Run } from "./support/runs";

type Session = {
  id: string;
  agent_id: string;
  active_run_id: string | null;
  head_run_id: string | null;
  run_count: number;
  metrics: Run["metrics"];
};

const countRows = async (table: string, sessionId: string) =>
  (
    await env.DB.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE ${table === "sessions" ? "id" : "session_id"} = ?`)
      .bind(sessionId)
      .first<{ n: number }>()
  )?.n;

describe("sessions", () => {
  it("shows a session's active and head runs, run count and summed metrics", async () => {
    const agent = await createAgent({ tools: [{ type: "client", name: "ask", parameters: { type: "object", properties: {} } }] });
    const sessionId = `view-${crypto.randomUUID()}`;
    const first = await runTurn(agent.id, { input: "one", session_id: sessionId });
    const paused = await runTurn(agent.id, { input: "[[tool ask {}]] two", session_id: sessionId });
    const session = await (await api(`/v1/sessions/${sessionId}`)).json<Session>();
    expect(session).toMatchObject({ id: sessionId, agent_id: agent.id, active_run_id: paused.id, head_run_id: paused.id, run_count: 2 });
    expect(session.metrics.model_calls).toBe(2);
    expect(session.metrics.input_tokens).toBe(first.metrics.input_tokens + paused.metrics.input_tokens);

    const listed = await (await api(`/v1/sessions?agent_id=${agent.id}`)).json<{ data: Session[]; next_cursor: string | null }>();
    expect(listed.data).toHaveLength(1);
    expect(listed.data[0]).toMatchObject({ id: sessionId, run_count: 2, head_run_id: paused.id, active_run_id: paused.id });
    expect(listed.next_cursor).toBeNull();
  });

  it("returns the transcript up to the end of a given run", async () => {
    const agent = await createAgent();
    const sessionId = `branch-${crypto.randomUUID()}`;
    const first = await runTurn(agent.id, { input: "one", session_id: sessionId });
    await runTurn(agent.id, { input: "two", session_id: sessionId });
    const upToFirst = await (await api(`/v1/sessions/${sessionId}/transcript?run_id=${first.id}`)).json<{ data: { run_id: string }[] }>();
    expect(upToFirst.data.map((m) => m.run_id)).toEqual([first.id, first.id]);
    expect(await transcriptOf(sessionId)).toHaveLength(4);
    expect((await api(`/v1/sessions/${sessionId}/transcript?run_id=run_unknown`)).status).toBe(404);
  });

  it("answers 404 for a session used through an agent it does not belong to", async () => {
    const owner = await createAgent();
    const other = await createAgent();
    const sessionId = `owned-${crypto.randomUUID()}`;
    await runTurn(owner.id, { input: "mine", session_id: sessionId });
    const response = await postRun(other.id, { input: "yours?", session_id: sessionId });
    expect(response.status).toBe(404);
    expect((await response.json<{ error: { type: string } }>()).error.type).toBe("not_found");
    expect(await transcriptOf(sessionId)).toHaveLength(2);
  });

  it("deletes a session: cancels its run and removes its rows", async () => {
    const agent = await createAgent();
    const sessionId = `del-${crypto.randomUUID()}`;
    await runTurn(agent.id, { input: "kept?", session_id: sessionId });
    const streaming = new SseReader(await postRun(agent.id, { input: `${HOLD_MODEL} long answer`, session_id: sessionId, stream: true }));
    const opening = await streaming.until("model_request_started");
    const deleted = await api(`/v1/sessions/${sessionId}`, { method: "DELETE" });
    expect(deleted.status).toBe(204);
    const events = [...opening, ...(await streaming.rest())];
    expect(events.at(-1)).toMatchObject({ type: "run_cancelled", data: { reason: "session deleted" } });
    expect((await api(`/v1/sessions/${sessionId}`)).status).toBe(404);
    expect((await api(`/v1/agents/${agent.id}/runs/${events[0]!.run_id}`)).status).toBe(404);
    for (const table of ["sessions", "runs", "run_inputs", "messages", "events"]) expect(await countRows(table, sessionId)).toBe(0);
    expect((await api(`/v1/sessions/${sessionId}`, { method: "DELETE" })).status).toBe(404);
  });
});

describe("cancel", () => {
  it("cancels a running run, frees the session at once, and is idempotent", async () => {
    const agent = await createAgent();
    const sessionId = `cancel-${crypto.randomUUID()}`;
    // The model call would answer long after the test's timeout: the cancel cannot wait for it.
    const streaming = new SseReader(
      await postRun(agent.id, { input: `${HOLD_MODEL} never finished`, session_id: sessionId, stream: true }),
    );
    const opening = await streaming.until("model_request_started");
    const runId = opening[0]!.run_id;
    const cancelled = await api(`/v1/agents/${agent.id}/runs/${runId}/cancel`, { method: "POST" });
    expect(cancelled.status).toBe(200);
    expect(await cancelled.json<Run>()).toMatchObject({ id: runId, status: "cancelled" });
    expect((await runTurn(agent.id, { input: "next", session_id: sessionId })).status).toBe("completed");
    const again = await api(`/v1/agents/${agent.id}/runs/${runId}/cancel`, { method: "POST" });
    expect(await again.json<Run>()).toMatchObject({ status: "cancelled" });
    const rest = await streaming.rest();
    expect(rest.map((e) => e.type)).not.toContain("run_completed");
    expect(rest.at(-1)?.type).toBe("run_cancelled");
    // The interrupted answer is not in the transcript: the next turn follows the cancelled input.
    expect((await transcriptOf(sessionId)).map((m) => m.role)).toEqual(["user", "user", "assistant"]);
  });

  it("refuses to continue a cancelled run in place", async () => {
    const agent = await createAgent({ tools: [{ type: "client", name: "ask", parameters: { type: "object", properties: {} } }] });
    const paused = await runTurn(agent.id, { input: "[[tool ask {}]]" });
    const cancelled = await api(`/v1/agents/${agent.id}/runs/${paused.id}/cancel`, { method: "POST" });
    expect(await cancelled.json<Run>()).toMatchObject({ status: "cancelled" });
    const response = await api(`/v1/agents/${agent.id}/runs/${paused.id}/continue`, {
      body: { tool_results: [{ tool_call_id: paused.required_actions[0]!.tool_call_id, output: "late" }] },
    });
    // A late answer for a call the run no longer waits for: the run as it is, nothing done (docs/tools.md).
    expect(response.status).toBe(200);
    expect(await response.json<Run>()).toMatchObject({ id: paused.id, status: "cancelled" });
    // The session is free again, and its next turn does not send the unanswered call.
    expect((await runTurn(agent.id, { input: "moving on", session_id: paused.session_id })).output).toBe("You said: moving on");
  });

  it("returns a finished run unchanged", async () => {
    const agent = await createAgent();
    const run = await runTurn(agent.id, { input: "done" });
    const response = await api(`/v1/agents/${agent.id}/runs/${run.id}/cancel`, { method: "POST" });
    expect(await response.json()).toEqual(run);
  });
});
