import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, createAgent } from "./support/http";
import { deliverRunMessages, holdRunQueue, sessionStub } from "./support/run-queue";
import { postRun, readEvents, runTurn, type Run } from "./support/runs";
import { callsReceived } from "./support/tool-server";

const counted = (bucket: string) => ({
  type: "webhook",
  name: "charge",
  parameters: { type: "object", properties: {} },
  url: `${env.TOOL_SERVER_URL}/echo/${bucket}`,
});

async function startBackground(agentId: string, body: Record<string, unknown>) {
  const response = await postRun(agentId, { ...body, background: true });
  expect(response.status).toBe(202);
  return response.json<{ run_id: string; session_id: string; status: string }>();
}

const getRun = async (agentId: string, runId: string, query = "") => (await api(`/v1/agents/${agentId}/runs/${runId}${query}`)).json<Run>();

describe("background runs", () => {
  it("answers 202 at once, then the queue runs it: pending → running → completed", async () => {
    const agent = await createAgent();
    const accepted = await startBackground(agent.id, { input: "[[slow 400]] in the background" });
    expect(accepted).toMatchObject({ status: "pending" });
    expect(accepted.run_id).toMatch(/^run_/);
    // Polling could miss a state on a busy machine; the run's times and its stored events cannot.
    const run = await getRun(agent.id, accepted.run_id, "?wait=30");
    expect(run.status).toBe("completed");
    expect(run.output).toBe("You said: in the background");
    const [created, started, finished] = [run.created_at, run.started_at, run.finished_at].map((t) => Date.parse(String(t)));
    expect(created).toBeLessThanOrEqual(started!);
    expect(started).toBeLessThanOrEqual(finished!);
    const events = (await (await api(`/v1/agents/${agent.id}/runs/${run.id}/events`)).json<{ data: { type: string }[] }>()).data;
    expect(events[0]?.type).toBe("run_started");
    expect(events.at(-1)?.type).toBe("run_completed");
  });

  it("holds the session's turn while pending", async () => {
    const agent = await createAgent();
    const sessionId = `bg-${crypto.randomUUID()}`;
    const held = await holdRunQueue(sessionId);
    const accepted = await startBackground(agent.id, { input: "hold", session_id: sessionId });
    const busy = await postRun(agent.id, { input: "me too", session_id: sessionId });
    expect(busy.status).toBe(409);
    expect((await busy.json<{ error: { details: Record<string, unknown> } }>()).error.details).toMatchObject({
      active_run_id: accepted.run_id,
      active_status: "pending",
    });
    await deliverRunMessages(held);
    expect((await getRun(agent.id, accepted.run_id, "?wait=20")).status).toBe("completed");
  });

  it("long-polls with ?wait= until the run stops", async () => {
    const agent = await createAgent();
    const accepted = await startBackground(agent.id, { input: "[[slow 300]] wait for me" });
    const run = await getRun(agent.id, accepted.run_id, "?wait=20");
    expect(run.status).toBe("completed");
  });

  it("streams a background run when stream is true as well", async () => {
    const agent = await createAgent();
    const response = await postRun(agent.id, { input: "streamed from the queue", background: true, stream: true });
    expect(response.status).toBe(200);
    const events = await readEvents(response);
    expect(events[0]?.type).toBe("run_started");
    expect(events.at(-1)).toMatchObject({ type: "run_completed", data: { output: "You said: streamed from the queue" } });
  });

  it("never starts a run twice when its message is delivered three times", async () => {
    const bucket = crypto.randomUUID();
    const agent = await createAgent({ tools: [counted(bucket)] });
    const sessionId = `bg-${crypto.randomUUID()}`;
    const held = await holdRunQueue(sessionId);
    const accepted = await startBackground(agent.id, { input: "[[tool charge {}]] pay once", session_id: sessionId });
    expect(held).toEqual([{ tenant: "default", session_id: sessionId, run_id: accepted.run_id }]);
    const result = await deliverRunMessages([held[0], held[0], held[0]]);
    expect(result.explicitAcks.sort()).toEqual(["m1", "m2", "m3"]);
    expect(result.retryMessages).toEqual([]);
    const run = await getRun(agent.id, accepted.run_id, "?wait=20");
    expect(run.status).toBe("completed");
    expect(run.metrics.model_calls).toBe(2);
    expect(await callsReceived(bucket)).toHaveLength(1);
  });

  it("acks a malformed message and ends a dead-lettered pending run in error", async () => {
    const agent = await createAgent();
    const sessionId = `dlq-${crypto.randomUUID()}`;
    const held = await holdRunQueue(sessionId);
    const accepted = await startBackground(agent.id, { input: "never delivered", session_id: sessionId });
    const result = await deliverRunMessages([{ nope: true }, held[0]], "agentry-runs-dlq");
    expect(result.explicitAcks.sort()).toEqual(["m1", "m2"]);
    const run = await getRun(agent.id, accepted.run_id);
    expect(run.status).toBe("error");
    expect(run.error?.message).toMatch(/dead-lettered/);
    // A late copy of the message starts nothing, and the session takes the next turn.
    await deliverRunMessages(held);
    expect((await getRun(agent.id, accepted.run_id)).status).toBe("error");
    expect((await runTurn(agent.id, { input: "next", session_id: sessionId })).status).toBe("completed");
  });

  it("starts a pending run whose message never comes, from the object's fallback timer", async () => {
    const agent = await createAgent();
    const sessionId = `fallback-${crypto.randomUUID()}`;
    await holdRunQueue(sessionId);
    const before = Date.now();
    const accepted = await startBackground(agent.id, { input: "fallback", session_id: sessionId });
    const stub = sessionStub(sessionId);
    const fallback = await runInDurableObject(stub, (_instance, state) => {
      const row = state.storage.sql.exec<{ due_at: number }>("SELECT due_at FROM timers WHERE name = 'queue_fallback'").one();
      state.storage.sql.exec("UPDATE timers SET due_at = 0 WHERE name = 'queue_fallback'");
      return row;
    });
    // Armed QUEUE_FALLBACK_SECONDS (30 s) after the run was created.
    expect(fallback.due_at).toBeGreaterThanOrEqual(before + 30_000);
    expect(fallback.due_at).toBeLessThanOrEqual(Date.now() + 30_000);
    expect((await getRun(agent.id, accepted.run_id)).status).toBe("pending");
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const run = await getRun(agent.id, accepted.run_id, "?wait=10");
    expect(run.status).toBe("completed");
    expect(run.output).toBe("You said: fallback");
  });

  it("cancels a pending run: it never starts, and its message is a no-op", async () => {
    const bucket = crypto.randomUUID();
    const agent = await createAgent({ tools: [counted(bucket)] });
    const sessionId = `cancel-${crypto.randomUUID()}`;
    const held = await holdRunQueue(sessionId);
    const accepted = await startBackground(agent.id, { input: "[[tool charge {}]] cancelled before it ran", session_id: sessionId });
    const cancelled = await (await api(`/v1/agents/${agent.id}/runs/${accepted.run_id}/cancel`, { method: "POST" })).json<Run>();
    expect(cancelled.status).toBe("cancelled");
    const result = await deliverRunMessages(held);
    expect(result.explicitAcks).toEqual(["m1"]);
    expect((await getRun(agent.id, accepted.run_id)).status).toBe("cancelled");
    expect((await runTurn(agent.id, { input: "next", session_id: sessionId })).status).toBe("completed");
    expect(await callsReceived(bucket)).toHaveLength(0);
  });
});
