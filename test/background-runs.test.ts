import { createExecutionContext, createMessageBatch, getQueueResult, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import worker from "../src/index";
import { describe, expect, it } from "vitest";
import { api, createAgent } from "./support/http";
import { postRun, readEvents, runTurn, type Run } from "./support/runs";

const stubOf = (sessionId: string) => env.SESSION.get(env.SESSION.idFromName(`default/${sessionId}`));
const callsOf = async (bucket: string) => (await fetch(`${env.TOOL_SERVER_URL}/calls/${bucket}`)).json<unknown[]>();
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

const getRun = async (agentId: string, runId: string, query = "") =>
  (await api(`/v1/agents/${agentId}/runs/${runId}${query}`)).json<Run>();

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
    const accepted = await startBackground(agent.id, { input: "[[slow 300]] hold", session_id: sessionId });
    const busy = await postRun(agent.id, { input: "me too", session_id: sessionId });
    expect(busy.status).toBe(409);
    expect((await busy.json<{ error: { details: { active_run_id: string } } }>()).error.details.active_run_id).toBe(accepted.run_id);
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
    const accepted = await startBackground(agent.id, { input: "[[tool charge {}]] pay once" });
    const body = { tenant: "default", session_id: accepted.session_id, run_id: accepted.run_id };
    const batch = createMessageBatch("agentry-runs", [1, 2, 3].map((i) => ({ id: `m${i}`, timestamp: Date.now(), attempts: 1, body })));
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    const result = await getQueueResult(batch, ctx);
    expect(result.explicitAcks.sort()).toEqual(["m1", "m2", "m3"]);
    expect(result.retryMessages).toEqual([]);
    const run = await getRun(agent.id, accepted.run_id, "?wait=20");
    expect(run.status).toBe("completed");
    expect(run.metrics.model_calls).toBe(2);
    // The real queue delivered its own copy too: still one execution of the tool.
    await new Promise((r) => setTimeout(r, 1500));
    expect(await callsOf(bucket)).toHaveLength(1);
  });

  it("acks a malformed message and ends a dead-lettered pending run in error", async () => {
    const agent = await createAgent({ tools: [{ type: "client", name: "ask", parameters: { type: "object", properties: {} } }] });
    const sessionId = `dlq-${crypto.randomUUID()}`;
    // A paused run holds the session; cancel it and create a pending run through the object directly.
    const accepted = await startBackground(agent.id, { input: "[[slow 2000]] never delivered", session_id: sessionId });
    const batch = createMessageBatch("agentry-runs-dlq", [
      { id: "bad", timestamp: Date.now(), attempts: 1, body: { nope: true } },
      { id: "dead", timestamp: Date.now(), attempts: 1, body: { tenant: "default", session_id: sessionId, run_id: accepted.run_id } },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    expect((await getQueueResult(batch, ctx)).explicitAcks.sort()).toEqual(["bad", "dead"]);
    const run = await getRun(agent.id, accepted.run_id, "?wait=10");
    // Either the real queue started it before the dead letter came (then it completes), or it ends in error.
    if (run.status === "error") expect(run.error?.message).toMatch(/dead-lettered/);
    else expect(run.status).toBe("completed");
  });

  it("starts a pending run whose message never comes, from the object's fallback timer", async () => {
    const agent = await createAgent();
    const accepted = await startBackground(agent.id, { input: "fallback" });
    const stub = stubOf(accepted.session_id);
    const due = await runInDurableObject(stub, (_instance, state) => {
      const rows = state.storage.sql.exec<{ name: string; due_at: number }>("SELECT name, due_at FROM timers").toArray();
      state.storage.sql.exec("UPDATE timers SET due_at = 0 WHERE name = 'queue_fallback'");
      return rows;
    });
    const fallback = due.find((t) => t.name === "queue_fallback");
    // Armed about QUEUE_FALLBACK_SECONDS (30 s) ahead, unless the queue already started the run.
    if (fallback) expect(fallback.due_at).toBeGreaterThan(Date.now() + 20_000);
    await runDurableObjectAlarm(stub);
    const run = await getRun(agent.id, accepted.run_id, "?wait=10");
    expect(run.status).toBe("completed");
    expect(run.output).toBe("You said: fallback");
  });

  it("cancels a pending run: it never starts, and its message is a no-op", async () => {
    const bucket = crypto.randomUUID();
    const agent = await createAgent({ tools: [counted(bucket)] });
    const accepted = await startBackground(agent.id, { input: "[[tool charge {}]] cancelled before it ran" });
    const cancelled = await (await api(`/v1/agents/${agent.id}/runs/${accepted.run_id}/cancel`, { method: "POST" })).json<Run>();
    expect(["cancelled", "completed"]).toContain(cancelled.status);
    if (cancelled.status === "cancelled") {
      const batch = createMessageBatch("agentry-runs", [
        { id: "late", timestamp: Date.now(), attempts: 1, body: { tenant: "default", session_id: accepted.session_id, run_id: accepted.run_id } },
      ]);
      const ctx = createExecutionContext();
      await worker.queue(batch, env);
      await getQueueResult(batch, ctx);
      await new Promise((r) => setTimeout(r, 1500));
      expect((await getRun(agent.id, accepted.run_id)).status).toBe("cancelled");
      expect(await callsOf(bucket)).toHaveLength(0);
      expect((await runTurn(agent.id, { input: "next", session_id: accepted.session_id })).status).toBe("completed");
    }
  });
});
