import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { storedEvents } from "./support/events";
import { deletesSession, holdD1Batch, sessionStub, writesRunStatus } from "./support/held-d1";
import { api, createAgent } from "./support/http";
import { postRun, runTurn, type Run } from "./support/runs";
import { callsReceived, gateTool } from "./support/tool-server";

const sessionIdFor = (name: string) => `${name}-${crypto.randomUUID()}`;
const askUser = { type: "client", name: "ask_user", parameters: { type: "object", properties: {} } };
const continuePath = (agentId: string, runId: string) => `/v1/agents/${agentId}/runs/${runId}/continue`;

/** The object's in-memory bookkeeping, which a user cannot see but which must not grow. */
type CoreView = { hub: { size: number }; store: { putRun: (run: unknown) => void } };
type LifeView = { launchingRuns: () => string[]; wakeAfterEviction: () => void };
const coreOf = (instance: unknown) => (instance as { core: CoreView }).core;
const lifeOf = (instance: unknown) => (instance as { life: LifeView }).life;

/** Resolves when the object is next entered by an RPC call that wakes it (a continue, a GET of a run). */
function nextEntry(instance: unknown): Promise<void> {
  const life = lifeOf(instance);
  const wake = life.wakeAfterEviction;
  return new Promise<void>((resolve) => {
    life.wakeAfterEviction = function (this: LifeView) {
      life.wakeAfterEviction = wake;
      resolve();
      wake.call(this);
    };
  });
}

/** The run the session's runs list shows first (D1). */
async function onlyRunOf(agentId: string, sessionId: string): Promise<string> {
  const list = await (await api(`/v1/agents/${agentId}/runs?session_id=${sessionId}`)).json<{ data: Run[] }>();
  expect(list.data).toHaveLength(1);
  return list.data[0]!.id;
}

describe("the edges of a run", () => {
  it("refuses a turn that arrives while the session is being deleted, and the session stays deleted", async () => {
    const agent = await createAgent();
    const sessionId = sessionIdFor("delete-race");
    await runTurn(agent.id, { input: "first", session_id: sessionId });
    const held = await holdD1Batch(sessionId, deletesSession);

    const deleting = api(`/v1/sessions/${sessionId}`, { method: "DELETE" });
    await held.reached;
    const during = await postRun(agent.id, { input: "during the delete", session_id: sessionId });
    expect(during.status).toBe(409);
    expect((await during.json<{ error: { type: string } }>()).error.type).toBe("session_busy");
    held.release();
    expect((await deleting).status).toBe(204);

    expect((await api(`/v1/sessions/${sessionId}`)).status).toBe(404);
    const runs = await (await api(`/v1/agents/${agent.id}/runs?session_id=${sessionId}`)).json<{ data: Run[] }>();
    expect(runs.data).toEqual([]);
    // The id is free again: a new turn starts a new session with nothing of the old one.
    const next = await runTurn(agent.id, { input: "a new start", session_id: sessionId });
    expect(next.status).toBe("completed");
    const transcript = await (await api(`/v1/sessions/${sessionId}/transcript`)).json<{ data: { run_id: string }[] }>();
    expect(transcript.data.map((m) => m.run_id)).toEqual([next.id, next.id]);
  });

  it("finishes a delete that failed half way on the next entry, from its stored tombstone: the session never comes back", async () => {
    const agent = await createAgent();
    const sessionId = sessionIdFor("delete-resumed");
    const first = await runTurn(agent.id, { input: "first", session_id: sessionId });
    const held = await holdD1Batch(sessionId, deletesSession);

    // The delete's D1 call fails: D1 still has every row, the object has its tombstone and no delete in progress
    // (what an eviction in the middle leaves too).
    const deleting = api(`/v1/sessions/${sessionId}`, { method: "DELETE" });
    await held.reached;
    held.release(new Error("D1 unavailable"));
    expect((await deleting).status).toBe(500);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM runs WHERE id = ?").bind(first.id).first<number>("n")).toBe(1);

    // The next entry finds the tombstone and finishes the delete before it answers.
    expect((await api(`/v1/sessions/${sessionId}`)).status).toBe(404);
    expect((await api(`/v1/agents/${agent.id}/runs/${first.id}`)).status).toBe(404);
    const runs = await (await api(`/v1/agents/${agent.id}/runs?session_id=${sessionId}`)).json<{ data: Run[] }>();
    expect(runs.data).toEqual([]);
  });

  it("answers a run record that fails its schema, in D1 or in the object, with an internal error naming no field of it", async () => {
    const agent = await createAgent();
    const sessionId = sessionIdFor("corrupt-record");
    const run = await runTurn(agent.id, { input: "first", session_id: sessionId });
    const corrupt = JSON.stringify({ id: run.id, status: "finished", metrics: "none" });

    await env.DB.prepare("UPDATE runs SET body = ? WHERE id = ?").bind(corrupt, run.id).run();
    const listed = await api(`/v1/agents/${agent.id}/runs?session_id=${sessionId}`);
    expect(listed.status).toBe(500);
    expect((await listed.json<{ error: { type: string } }>()).error.type).toBe("internal");

    await runInDurableObject(sessionStub(sessionId), (_instance, state) => {
      state.storage.sql.exec("UPDATE runs SET body = ? WHERE id = ?", corrupt, run.id);
    });
    const read = await api(`/v1/agents/${agent.id}/runs/${run.id}`);
    expect(read.status).toBe(500);
    expect((await read.json<{ error: { type: string } }>()).error.type).toBe("internal");
  });

  it("emits a paused run's run_paused before a continue that arrives while its D1 write is in flight", async () => {
    const agent = await createAgent({ tools: [askUser] });
    const sessionId = sessionIdFor("pause-race");
    const held = await holdD1Batch(sessionId, writesRunStatus("paused"));
    // In the background: no response of the test's is open when the test resumes in the object's context.
    expect((await postRun(agent.id, { input: "[[tool ask_user {}]] hi", session_id: sessionId, background: true })).status).toBe(202);
    await held.reached;

    // The object has the run paused: a client sees it and answers the tool call.
    const runId = await onlyRunOf(agent.id, sessionId);
    const seen = await (await api(`/v1/agents/${agent.id}/runs/${runId}`)).json<Run>();
    expect(seen.status).toBe("paused");
    const toolCallId = (seen.required_actions as { tool_call_id: string }[])[0]!.tool_call_id;
    const entered = nextEntry(held.instance);
    const continued = api(continuePath(agent.id, runId), { body: { tool_results: [{ tool_call_id: toolCallId, output: "yes" }] } });
    await entered;
    held.release();

    const answer = await continued;
    expect(answer.status).toBe(200);
    expect((await answer.json<Run>()).status).toBe("completed");
    const types = (await storedEvents(agent.id, runId)).map((e) => e.type);
    expect(types.filter((t) => t.startsWith("run_"))).toEqual(["run_started", "run_paused", "run_continued", "run_completed"]);
  });

  it("starts the next turn's run after the last run's terminal event, even when the turn was released before it went out", async () => {
    const agent = await createAgent();
    const sessionId = sessionIdFor("run-order");
    const held = await holdD1Batch(sessionId, writesRunStatus("completed"));
    expect((await postRun(agent.id, { input: "the first turn", session_id: sessionId, background: true })).status).toBe(202);
    await held.reached;

    // The first run is finished in the object and the turn is free; its run_completed waits on D1.
    const firstId = await onlyRunOf(agent.id, sessionId);
    const entered = nextEntry(held.instance);
    const next = postRun(agent.id, { input: "the next turn", session_id: sessionId, background: true });
    await entered;
    held.release();
    const accepted = await next;
    expect(accepted.status).toBe(202);
    const nextId = (await accepted.json<{ run_id: string }>()).run_id;
    expect((await (await api(`/v1/agents/${agent.id}/runs/${nextId}?wait=30`)).json<Run>()).status).toBe("completed");

    const first = await storedEvents(agent.id, firstId);
    const second = await storedEvents(agent.id, nextId);
    expect(first.at(-1)!.type).toBe("run_completed");
    expect(second[0]!.type).toBe("run_started");
    expect(second[0]!.seq).toBeGreaterThan(first.at(-1)!.seq);
  });

  it("creates the fork on a retry with the same Idempotency-Key after the first attempt was refused", async () => {
    const agent = await createAgent({ tools: [askUser] });
    const sessionId = sessionIdFor("fork-retry");
    const source = await runTurn(agent.id, { input: "the source", session_id: sessionId });
    const paused = await runTurn(agent.id, { input: "[[tool ask_user {}]] hold the session", session_id: sessionId });
    expect(paused.status).toBe("paused");
    const fork = { body: { input: "a branch", fork: true }, headers: { "idempotency-key": `fork-${crypto.randomUUID()}` } };

    const refused = await api(continuePath(agent.id, source.id), fork);
    expect(refused.status).toBe(409);
    expect((await api(`/v1/agents/${agent.id}/runs/${paused.id}/cancel`, { method: "POST" })).status).toBe(200);

    const retried = await api(continuePath(agent.id, source.id), fork);
    expect(retried.status).toBe(200);
    const branch = await retried.json<Run>();
    expect(branch.id).not.toBe(source.id);
    expect(branch).toMatchObject({ parent_run_id: source.id, status: "completed" });
    // A second retry answers the same branch.
    const again = await (await api(continuePath(agent.id, source.id), fork)).json<Run>();
    expect(again.id).toBe(branch.id);
  });

  it("leaves no waiter behind after idempotent replays and a timed-out ?wait=", async () => {
    const bucket = crypto.randomUUID();
    const agent = await createAgent({ tools: [gateTool(bucket)] });
    const sessionId = sessionIdFor("waiters");
    const headers = { "idempotency-key": `turn-${crypto.randomUUID()}` };
    const body = { input: "once", session_id: sessionId };
    const first = await (await api(`/v1/agents/${agent.id}/runs`, { body, headers })).json<Run>();
    for (let i = 0; i < 5; i++) {
      expect((await (await api(`/v1/agents/${agent.id}/runs`, { body, headers })).json<Run>()).id).toBe(first.id);
    }
    await runInDurableObject(sessionStub(sessionId), (instance) => expect(coreOf(instance).hub.size).toBe(0));

    const slow = await (await postRun(agent.id, { input: "[[tool wait {}]] long", session_id: sessionId, background: true })).json<{
      run_id: string;
    }>();
    // Once the queue has started it (its webhook call is held at the gate), a short ?wait= times out on a running run.
    await callsReceived(bucket, 1);
    const waited = await (await api(`/v1/agents/${agent.id}/runs/${slow.run_id}?wait=0.05`)).json<Run>();
    expect(waited.status).toBe("running");
    await runInDurableObject(sessionStub(sessionId), (instance) => expect(coreOf(instance).hub.size).toBe(0));
    expect((await api(`/v1/agents/${agent.id}/runs/${slow.run_id}/cancel`, { method: "POST" })).status).toBe(200);
  });

  it("forgets a run whose first commit failed, so the retry's run is resumed like any other", async () => {
    const agent = await createAgent();
    const sessionId = sessionIdFor("failed-commit");
    await runInDurableObject(sessionStub(sessionId), (instance) => {
      const store = coreOf(instance).store;
      const putRun = store.putRun;
      store.putRun = () => {
        store.putRun = putRun;
        throw new Error("injected storage failure");
      };
    });
    const failed = await postRun(agent.id, { input: "first", session_id: sessionId });
    expect(failed.status).toBe(500);
    await runInDurableObject(sessionStub(sessionId), (instance) => expect(lifeOf(instance).launchingRuns()).toEqual([]));
    expect((await runTurn(agent.id, { input: "again", session_id: sessionId })).status).toBe("completed");
  });
});
