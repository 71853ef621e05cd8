import { abortAllDurableObjects } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { isStrictlyIncreasing, openSocket, SseReader, storedEvents } from "./support/events";
import { api, createAgent } from "./support/http";
import { postRun, readEvents, transcriptOf, type Run } from "./support/runs";
import { callsReceived, gateTool, openGate } from "./support/tool-server";
import { requestsOf, upstreamBase } from "./support/upstreams";

type ErrorBody = {
  error: { type: string; message: string; details: Record<string, unknown> & { fields?: { path: string; message: string }[] } };
};
type Accepted = { run_id: string; session_id: string; status: string };
type Session = { active_run_id: string | null; queued_run_ids: string[]; head_run_id: string | null; run_count: number };

/** An agent whose `wait` tool is held at the tool server's gate until the test opens it. */
async function gatedAgent(fields: Record<string, unknown> = {}) {
  const bucket = crypto.randomUUID();
  const agent = await createAgent({ tools: [gateTool(bucket)], ...fields });
  return { bucket, agent };
}

/** Starts a background run that holds its session inside its webhook call, until the gate opens. */
async function heldRun(agentId: string, bucket: string) {
  const held = await (await postRun(agentId, { input: "[[tool wait {}]] first", background: true })).json<Accepted>();
  await callsReceived(bucket, 1);
  return held;
}

const sessionOf = async (sessionId: string) => (await api(`/v1/sessions/${sessionId}`)).json<Session>();
const runOf = async (agentId: string, runId: string, wait = "") => (await api(`/v1/agents/${agentId}/runs/${runId}${wait}`)).json<Run>();

describe('on_busy: "enqueue"', () => {
  it("queues turns behind the active run and runs them in order, one at a time; a cancelled one never runs", async () => {
    const { bucket, agent } = await gatedAgent();
    const held = await heldRun(agent.id, bucket);
    const queued: Accepted[] = [];
    for (const n of [1, 2, 3, 4, 5]) {
      const response = await postRun(agent.id, { input: `queued ${n}`, session_id: held.session_id, on_busy: "enqueue", background: true });
      expect(response.status).toBe(202);
      queued.push(await response.json<Accepted>());
    }
    expect(queued.map((q) => q.status)).toEqual(Array(5).fill("queued"));
    expect(await sessionOf(held.session_id)).toMatchObject({ active_run_id: held.run_id, queued_run_ids: queued.map((q) => q.run_id) });
    // Each says its place in line.
    for (const [i, q] of queued.entries()) {
      expect((await storedEvents(agent.id, q.run_id)).map((e) => [e.type, e.data])).toEqual([["run_queued", { position: i + 1 }]]);
    }
    const third = queued[2]!;
    const cancelled = await (await api(`/v1/agents/${agent.id}/runs/${third.run_id}/cancel`, { method: "POST" })).json<Run>();
    expect(cancelled).toMatchObject({ status: "cancelled", started_at: null });
    expect((await sessionOf(held.session_id)).queued_run_ids).toEqual([queued[0], queued[1], queued[3], queued[4]].map((q) => q!.run_id));

    await openGate(bucket);
    const last = await runOf(agent.id, queued[4]!.run_id, "?wait=20");
    expect(last).toMatchObject({ status: "completed", output: "You said: queued 5" });
    const runs = await Promise.all(queued.map((q) => runOf(agent.id, q.run_id)));
    expect(runs.map((r) => r.status)).toEqual(["completed", "completed", "cancelled", "completed", "completed"]);
    // One at a time, in order: each started after the one before it finished.
    const ran = [await runOf(agent.id, held.run_id), runs[0]!, runs[1]!, runs[3]!, runs[4]!];
    for (let i = 1; i < ran.length; i++)
      expect(Date.parse(ran[i]!.started_at!)).toBeGreaterThanOrEqual(Date.parse(ran[i - 1]!.finished_at!));
    // The cancelled turn's input is in no history; every other turn is, in order.
    const users = (await transcriptOf(held.session_id)).filter((m) => m.role === "user").map((m) => m.content[0]?.text);
    expect(users).toEqual(["[[tool wait {}]] first", "queued 1", "queued 2", "queued 4", "queued 5"]);
    expect(await sessionOf(held.session_id)).toMatchObject({
      active_run_id: null,
      queued_run_ids: [],
      head_run_id: queued[4]!.run_id,
      run_count: 6,
    });
    // The session's log: every event once, seqs strictly increasing, no run starting before the one before it ended.
    const log = (await Promise.all([held, ...queued].map((r) => storedEvents(agent.id, r.run_id)))).flat().sort((a, b) => a.seq - b.seq);
    expect(isStrictlyIncreasing(log.map((e) => e.seq))).toBe(true);
    expect(log.filter((e) => e.type === "run_started").map((e) => e.run_id)).toEqual(ran.map((r) => r.id));
    expect(log.find((e) => e.run_id === third.run_id && e.type === "run_cancelled")?.data).toEqual({ reason: "cancelled by request" });
  });

  it("shows a session's watcher over WebSocket every run in turn, with no gap in seq", async () => {
    const { bucket, agent } = await gatedAgent();
    const held = await heldRun(agent.id, bucket);
    const socket = await openSocket(held.session_id);
    const queued = await (
      await postRun(agent.id, { input: "next", session_id: held.session_id, on_busy: "enqueue", background: true })
    ).json<Accepted>();
    await openGate(bucket);
    const seen = await socket.eventsUntil((e) => e.run_id === queued.run_id && e.type === "run_completed");
    const fromQueued = seen.filter((e) => e.run_id === queued.run_id).map((e) => e.type);
    expect(fromQueued[0]).toBe("run_queued");
    expect(fromQueued[1]).toBe("run_started");
    expect(seen.findIndex((e) => e.run_id === held.run_id && e.type === "run_completed")).toBeLessThan(
      seen.findIndex((e) => e.run_id === queued.run_id && e.type === "run_started"),
    );
    // Every event the session logged from the socket's start on, once each, in seq order.
    const logged = (await Promise.all([held.run_id, queued.run_id].map((id) => storedEvents(agent.id, id))))
      .flat()
      .filter((e) => e.seq >= seen[0]!.seq)
      .sort((a, b) => a.seq - b.seq);
    expect(seen).toEqual(logged);
    expect(isStrictlyIncreasing(seen.map((e) => e.seq))).toBe(true);
  });

  it("answers a blocking or streamed queued turn once its own run has stopped", async () => {
    const { bucket, agent } = await gatedAgent();
    const held = await heldRun(agent.id, bucket);
    const blocking = postRun(agent.id, { input: "after you", session_id: held.session_id, on_busy: "enqueue" });
    const streamed = postRun(agent.id, { input: "and me", session_id: held.session_id, on_busy: "enqueue", stream: true });
    const reader = new SseReader(await streamed);
    await reader.until("run_queued");
    await openGate(bucket);
    const answer = await blocking;
    expect(answer.status).toBe(200);
    expect(await answer.json<Run>()).toMatchObject({ status: "completed", output: "You said: after you" });
    const events = await reader.rest();
    expect(events[0]?.type).toBe("run_started");
    expect(events.at(-1)).toMatchObject({ type: "run_completed", data: { output: "You said: and me" } });
  });

  it("follows the agent's on_busy when the turn does not say, and a turn's reject wins over it", async () => {
    const { bucket, agent } = await gatedAgent({ on_busy: "enqueue" });
    const held = await heldRun(agent.id, bucket);
    const queued = await postRun(agent.id, { input: "by default", session_id: held.session_id, background: true });
    expect(queued.status).toBe(202);
    expect((await queued.json<Accepted>()).status).toBe("queued");
    const refused = await postRun(agent.id, { input: "not now", session_id: held.session_id, on_busy: "reject" });
    expect(refused.status).toBe(409);
    expect((await refused.json<ErrorBody>()).error).toMatchObject({ type: "session_busy", details: { active_run_id: held.run_id } });
    expect((await sessionOf(held.session_id)).queued_run_ids).toHaveLength(1);
    await openGate(bucket);
  });

  it("keeps the queue waiting while the active run is paused, and starts it once the run ends", async () => {
    const agent = await createAgent({ tools: [{ type: "client", name: "ask_user", parameters: { type: "object", properties: {} } }] });
    const paused = await (await postRun(agent.id, { input: "[[tool ask_user {}]] ask" })).json<
      Run & { required_actions: { tool_call_id: string }[] }
    >();
    expect(paused.status).toBe("paused");
    const queued = await (
      await postRun(agent.id, { input: "later", session_id: paused.session_id, on_busy: "enqueue", background: true })
    ).json<Accepted>();
    expect(await sessionOf(paused.session_id)).toMatchObject({ active_run_id: paused.id, queued_run_ids: [queued.run_id] });
    const resumed = await api(`/v1/agents/${agent.id}/runs/${paused.id}/continue`, {
      body: { tool_results: [{ tool_call_id: paused.required_actions[0]!.tool_call_id, output: "blue" }] },
    });
    expect(await resumed.json<Run>()).toMatchObject({ status: "completed" });
    expect(await runOf(agent.id, queued.run_id, "?wait=20")).toMatchObject({ status: "completed", output: "You said: later" });
  });

  it("refuses a 17th queued run with 409 queue_full, storing nothing", async () => {
    const { bucket, agent } = await gatedAgent();
    const held = await heldRun(agent.id, bucket);
    for (let n = 1; n <= 16; n++) {
      const response = await postRun(agent.id, { input: `q${n}`, session_id: held.session_id, on_busy: "enqueue", background: true });
      expect(response.status, `turn ${n}`).toBe(202);
    }
    const full = await postRun(agent.id, { input: "one too many", session_id: held.session_id, on_busy: "enqueue", background: true });
    expect(full.status).toBe(409);
    expect((await full.json<ErrorBody>()).error).toMatchObject({
      type: "queue_full",
      details: { session_id: held.session_id, queued: 16 },
    });
    expect(await sessionOf(held.session_id)).toMatchObject({ run_count: 17 });
    // The session's delete cancels the held run and every queued one.
    expect((await api(`/v1/sessions/${held.session_id}`, { method: "DELETE" })).status).toBe(204);
    await openGate(bucket);
  });

  it("runs a queued turn exactly once after the object crashes with it in line", async () => {
    const { bucket, agent } = await gatedAgent();
    const held = await heldRun(agent.id, bucket);
    const queued = await (
      await postRun(agent.id, { input: "survivor", session_id: held.session_id, on_busy: "enqueue", background: true })
    ).json<Accepted>();
    await abortAllDurableObjects();
    await openGate(bucket);
    // The held run resumes (its webhook call is sent again, docs/tools.md), then the queued turn runs.
    expect(await runOf(agent.id, queued.run_id, "?wait=20")).toMatchObject({ status: "completed", output: "You said: survivor" });
    const transcript = await transcriptOf(held.session_id);
    expect(transcript.filter((m) => m.run_id === queued.run_id).map((m) => m.role)).toEqual(["user", "assistant"]);
    expect((await storedEvents(agent.id, queued.run_id)).filter((e) => e.type === "run_started")).toHaveLength(1);
  });
});

/** User texts of a provider request the recording gateway received (Messages format). */
const userTexts = (body: unknown) =>
  (body as { messages: { role: string; content: { type: string; text?: string }[] }[] }).messages
    .filter((m) => m.role === "user")
    .flatMap((m) => m.content.filter((b) => b.type === "text").map((b) => b.text));

/** An agent on the recording gateway whose `wait` tool is held at the tool server's gate. */
async function recordedGatedAgent() {
  const bucket = crypto.randomUUID();
  const agent = await createAgent({
    provider: "anthropic",
    model: "claude-test",
    base_url: upstreamBase(env.GATEWAY_URL, bucket, "anthropic"),
    tools: [gateTool(bucket)],
  });
  return { bucket, agent };
}

describe('on_busy: "interrupt" and "rollback"', () => {
  for (const policy of ["interrupt", "rollback"] as const) {
    it(`${policy}: cancels the active run in its tool call and starts the new turn at once, ${policy === "interrupt" ? "on top of what it did" : "from before it"}`, async () => {
      const { bucket, agent } = await recordedGatedAgent();
      const held = await heldRun(agent.id, bucket);
      const turn = await postRun(agent.id, { input: "change of plan", session_id: held.session_id, on_busy: policy });
      expect(turn.status).toBe(200);
      const run = await turn.json<Run>();
      expect(run).toMatchObject({ status: "completed", output: "You said: change of plan" });
      // The interrupted run: cancelled, with its reason, and still readable.
      expect((await runOf(agent.id, held.run_id)).status).toBe("cancelled");
      const events = await storedEvents(agent.id, held.run_id);
      expect(events.at(-1)).toMatchObject({
        type: "run_cancelled",
        data: { reason: policy === "interrupt" ? "interrupted" : "rolled_back" },
      });
      expect(events.map((e) => e.type)).not.toContain("tool_call_completed");
      // What the new turn's model call saw: the interrupted run's input (interrupt) or not (rollback); never its dangling tool call.
      const sent = await requestsOf(env.GATEWAY_URL, bucket);
      expect(userTexts(sent.at(-1)?.body)).toEqual(
        policy === "interrupt" ? ["[[tool wait {}]] first", "change of plan"] : ["change of plan"],
      );
      expect(JSON.stringify(sent.at(-1)?.body)).not.toContain("tool_use");
      // The session goes on from the new run; the log stays gap-free.
      expect(await sessionOf(held.session_id)).toMatchObject({ active_run_id: null, head_run_id: run.id });
      const next = await (await postRun(agent.id, { input: "and then", session_id: held.session_id })).json<Run>();
      expect(next.status).toBe("completed");
      expect(userTexts((await requestsOf(env.GATEWAY_URL, bucket)).at(-1)?.body)).toEqual(
        policy === "interrupt" ? ["[[tool wait {}]] first", "change of plan", "and then"] : ["change of plan", "and then"],
      );
      const log = (await Promise.all([held.run_id, run.id, next.id].map((id) => storedEvents(agent.id, id))))
        .flat()
        .sort((a, b) => a.seq - b.seq);
      expect(isStrictlyIncreasing(log.map((e) => e.seq))).toBe(true);
      expect(log.filter((e) => e.type === "run_started" || e.type === "run_cancelled").map((e) => [e.type, e.run_id])).toEqual([
        ["run_started", held.run_id],
        ["run_cancelled", held.run_id],
        ["run_started", run.id],
        ["run_started", next.id],
      ]);
      await openGate(bucket);
    });
  }

  it("interrupts a run in its model call, ahead of the queue; the queued turns run after the new one", async () => {
    const agent = await createAgent();
    const held = new SseReader(await postRun(agent.id, { input: "[[slow 600000]] long answer", stream: true }));
    const [started] = await held.until("model_request_started");
    const sessionId = started!.session_id;
    const queued = await (
      await postRun(agent.id, { input: "waiting", session_id: sessionId, on_busy: "enqueue", background: true })
    ).json<Accepted>();
    const run = await (await postRun(agent.id, { input: "now", session_id: sessionId, on_busy: "interrupt" })).json<Run>();
    expect(run).toMatchObject({ status: "completed", output: "You said: now" });
    expect((await held.rest()).at(-1)).toMatchObject({ type: "run_cancelled", data: { reason: "interrupted" } });
    const after = await runOf(agent.id, queued.run_id, "?wait=20");
    expect(after).toMatchObject({ status: "completed", output: "You said: waiting" });
    expect(Date.parse(after.started_at!)).toBeGreaterThanOrEqual(Date.parse(run.finished_at!));
    expect(await sessionOf(sessionId)).toMatchObject({ head_run_id: queued.run_id, queued_run_ids: [] });
  });
});

describe("a turn on a free session", () => {
  it("is a plain turn whatever its on_busy", async () => {
    const agent = await createAgent();
    const events = await readEvents(await postRun(agent.id, { input: "alone", on_busy: "enqueue", stream: true }));
    expect(events[0]?.type).toBe("run_started");
    expect(events.at(-1)).toMatchObject({ type: "run_completed", data: { output: "You said: alone" } });
  });
});

type Steered = { run_id: string; steer_id: string; steered_into: string };

describe('on_busy: "steer"', () => {
  it("gives the input to the running run's model before its next call, after the tool results, answered in the same run", async () => {
    const { bucket, agent } = await recordedGatedAgent();
    const held = await heldRun(agent.id, bucket);
    const response = await postRun(agent.id, { input: "also in Celsius", session_id: held.session_id, on_busy: "steer" });
    expect(response.status).toBe(202);
    const steered = await response.json<Steered>();
    expect(steered).toEqual({ run_id: held.run_id, steer_id: expect.stringMatching(/^str_/), steered_into: held.run_id });
    await openGate(bucket);
    const run = await runOf(agent.id, held.run_id, "?wait=20");
    expect(run).toMatchObject({ status: "completed", output: "You said: also in Celsius" });
    // The model's second call: the tool result, then the steer as a user message.
    const last = (await requestsOf(env.GATEWAY_URL, bucket)).at(-1)?.body as { messages: { role: string; content: { type: string }[] }[] };
    expect(userTexts(last)).toEqual(["[[tool wait {}]] first", "also in Celsius"]);
    expect(JSON.stringify(last.messages.at(-1))).toContain("tool_result");
    const events = await storedEvents(agent.id, held.run_id);
    expect(events.find((e) => e.type === "input_steered")?.data).toEqual({
      steer_id: steered.steer_id,
      input: [{ type: "text", text: "also in Celsius" }],
    });
    expect(events.filter((e) => e.type === "model_request_started")).toHaveLength(2);
    const transcript = await transcriptOf(held.session_id);
    expect(transcript.filter((m) => m.role === "user").map((m) => [m.run_id, m.content[0]?.text])).toEqual([
      [held.run_id, "[[tool wait {}]] first"],
      [held.run_id, "also in Celsius"],
    ]);
  });

  it("makes one more model call when the model gives its final answer while a steer is pending", async () => {
    const agent = await createAgent();
    const reader = new SseReader(await postRun(agent.id, { input: "[[slow 3000]] slow answer", stream: true }));
    const [started] = await reader.until("model_request_started");
    const steered = await (
      await postRun(agent.id, { input: "one more thing", session_id: started!.session_id, on_busy: "steer" })
    ).json<Steered>();
    expect(steered.steered_into).toBe(started!.run_id);
    const rest = await reader.rest();
    expect(rest.filter((e) => e.type === "model_request_started")).toHaveLength(1);
    expect(rest.at(-1)).toMatchObject({ type: "run_completed", data: { output: "You said: one more thing" } });
    const transcript = await transcriptOf(started!.session_id);
    expect(transcript.map((m) => [m.role, m.content[0]?.text])).toEqual([
      ["user", "[[slow 3000]] slow answer"],
      ["assistant", "You said: slow answer"],
      ["user", "one more thing"],
      ["assistant", "You said: one more thing"],
    ]);
  });

  it("turns a steer the model never saw into the next queued run when the run is cancelled", async () => {
    const { bucket, agent } = await gatedAgent();
    const held = await heldRun(agent.id, bucket);
    const steered = await (
      await postRun(agent.id, { input: "never mind, do this", session_id: held.session_id, on_busy: "steer" })
    ).json<Steered>();
    expect(steered.steered_into).toBe(held.run_id);
    expect((await api(`/v1/agents/${agent.id}/runs/${held.run_id}/cancel`, { method: "POST" })).status).toBe(200);
    const events = await storedEvents(agent.id, held.run_id);
    const queuedAs = events.find((e) => e.type === "steer_queued")?.data as { steer_id: string; queued_as: string };
    expect(queuedAs.steer_id).toBe(steered.steer_id);
    expect(events.map((e) => e.type).slice(-2)).toEqual(["steer_queued", "run_cancelled"]);
    expect(await runOf(agent.id, queuedAs.queued_as, "?wait=20")).toMatchObject({
      status: "completed",
      output: "You said: never mind, do this",
    });
    await openGate(bucket);
  });

  it("turns a steer to a paused run into a queued run at once", async () => {
    const agent = await createAgent({ tools: [{ type: "client", name: "ask_user", parameters: { type: "object", properties: {} } }] });
    const paused = await (await postRun(agent.id, { input: "[[tool ask_user {}]] ask" })).json<
      Run & { required_actions: { tool_call_id: string }[] }
    >();
    const steered = await (
      await postRun(agent.id, { input: "meanwhile", session_id: paused.session_id, on_busy: "steer" })
    ).json<Steered>();
    expect(steered.steered_into).not.toBe(paused.id);
    expect(await sessionOf(paused.session_id)).toMatchObject({ active_run_id: paused.id, queued_run_ids: [steered.steered_into] });
    await api(`/v1/agents/${agent.id}/runs/${paused.id}/continue`, {
      body: { tool_results: [{ tool_call_id: paused.required_actions[0]!.tool_call_id, output: "blue" }] },
    });
    expect(await runOf(agent.id, steered.steered_into, "?wait=20")).toMatchObject({ status: "completed", output: "You said: meanwhile" });
  });

  it("gives a pending steer to the model exactly once after the object crashes", async () => {
    const agent = await createAgent();
    const reader = new SseReader(await postRun(agent.id, { input: `${"[[slow 600000]]"} held`, stream: true }));
    const [started] = await reader.until("model_request_started");
    const sessionId = started!.session_id;
    const headers = { "idempotency-key": `steer-${crypto.randomUUID()}` };
    const first = await (
      await api(`/v1/agents/${agent.id}/runs`, { body: { input: "after the crash", session_id: sessionId, on_busy: "steer" }, headers })
    ).json<Steered>();
    await abortAllDurableObjects();
    await reader.cancel().catch(() => {});
    // A retry of the same steer is recognised, not sent again.
    const again = await (
      await api(`/v1/agents/${agent.id}/runs`, { body: { input: "after the crash", session_id: sessionId, on_busy: "steer" }, headers })
    ).json<Steered>();
    expect(again).toEqual(first);
    expect(await runOf(agent.id, started!.run_id, "?wait=20")).toMatchObject({ status: "completed", output: "You said: after the crash" });
    const users = (await transcriptOf(sessionId)).filter((m) => m.role === "user").map((m) => m.content[0]?.text);
    expect(users).toEqual(["[[slow 600000]] held", "after the crash"]);
  });
});

describe("each strategy against a run whose model call is in flight", () => {
  /** A streamed run held in its model call (the offline model's slow answer), and its first events. */
  async function heldInModelCall(agentId: string) {
    const reader = new SseReader(await postRun(agentId, { input: "[[slow 600000]] thinking", stream: true }));
    const [started] = await reader.until("model_request_started");
    return { reader, runId: started!.run_id, sessionId: started!.session_id };
  }

  it("enqueue: the queued turn starts once the run holding the session ends (here: cancelled)", async () => {
    const agent = await createAgent();
    const held = await heldInModelCall(agent.id);
    const queued = await (
      await postRun(agent.id, { input: "my turn", session_id: held.sessionId, on_busy: "enqueue", background: true })
    ).json<Accepted>();
    expect(queued.status).toBe("queued");
    await api(`/v1/agents/${agent.id}/runs/${held.runId}/cancel`, { method: "POST" });
    expect(await runOf(agent.id, queued.run_id, "?wait=20")).toMatchObject({ status: "completed", output: "You said: my turn" });
    expect((await held.reader.rest()).at(-1)).toMatchObject({ type: "run_cancelled", data: { reason: "cancelled by request" } });
  });

  it("rollback: the model call is aborted and the new turn's history leaves the rolled-back input out", async () => {
    const agent = await createAgent();
    const held = await heldInModelCall(agent.id);
    const run = await (await postRun(agent.id, { input: "start over", session_id: held.sessionId, on_busy: "rollback" })).json<Run>();
    expect(run).toMatchObject({ status: "completed", output: "You said: start over" });
    expect((await held.reader.rest()).at(-1)).toMatchObject({ type: "run_cancelled", data: { reason: "rolled_back" } });
    // The session's history, which its next model call sends: the rolled-back turn is not in it (its run stays readable).
    expect((await transcriptOf(held.sessionId)).map((m) => [m.run_id, m.role])).toEqual([
      [run.id, "user"],
      [run.id, "assistant"],
    ]);
    expect((await runOf(agent.id, held.runId)).status).toBe("cancelled");
  });
});
