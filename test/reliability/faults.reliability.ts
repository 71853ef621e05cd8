import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, type TestContext } from "vitest";
import { SseReader } from "../support/events";
import { api, createAgent } from "../support/http";
import { sessionStub, wrapSessionD1, writesRunStatus } from "../support/held-d1";
import { mirroredMessages } from "../support/mirror";
import { deliverRunMessages, holdRunQueue } from "../support/run-queue";
import { postRun, runTurn, transcriptOf, type Run, type RunEvent } from "../support/runs";
import { callsReceived, openGate } from "../support/tool-server";
import { count } from "./support/counts";
import {
  eventually,
  expectIntact,
  expectNoStoredSecrets,
  faultAgent,
  loopbackOf,
  PROVIDERS,
  storedScan,
  TWO_TOOLS,
  type Provider,
} from "./support/fault-run";

/** Rounds of every fault kind on every provider (19 kinds × 3 providers per round; 4 rounds = 228 faults). */
const ROUNDS = 4;
const RETRYABLE_STATUSES = [408, 429, 500, 502, 503, 504, 529];

type Started = { agentId: string; runId: string; sessionId: string; bucket: string };

/** Starts the two-tool run in the background, streaming; `open` opens the gate first (the run never waits there). */
async function start(provider: Provider, round: number, input = TWO_TOOLS, open = false, sessionId = `fault-${crypto.randomUUID()}`) {
  const bucket = crypto.randomUUID();
  const agent = await faultAgent(provider, bucket, round);
  if (open) await openGate(bucket);
  const response = await postRun(agent.id, { input, session_id: sessionId, background: true, stream: true });
  expect(response.status).toBe(200);
  const stream = new SseReader(response);
  const runId = (await stream.until("run_started"))[0]!.run_id;
  return { started: { agentId: agent.id, runId, sessionId, bucket } satisfies Started, stream };
}

const survived = (context: TestContext, kind: string) => {
  count(context, "faults", `injected_${kind}`);
  count(context, "faults", `survived_${kind}`);
};

/** Ends the client's stream of a run whose object is about to be reset (the stream dies with it). */
const hangUp = (stream: SseReader) => stream.cancel().catch(() => {});

async function evict(started: Started, stream: SseReader) {
  await hangUp(stream);
  await abortAllDurableObjects();
  await openGate(started.bucket);
  const calls = await expectIntact(started.agentId, started.runId, started.sessionId, started.bucket);
  return calls;
}

const faults: Record<string, (provider: Provider, round: number) => Promise<void>> = {
  ...Object.fromEntries(
    RETRYABLE_STATUSES.map((status) => [
      `provider_${status}`,
      async (provider: Provider, round: number) => {
        const { started, stream } = await start(provider, round, `[[fail ${status} x1]] ${TWO_TOOLS}`, true);
        const retries = (await stream.rest()).filter((e) => e.type === "retry");
        expect(retries.length).toBe(3);
        await expectIntact(started.agentId, started.runId, started.sessionId, started.bucket);
      },
    ]),
  ),
  stream_cut: async (provider, round) => {
    const { started, stream } = await start(provider, round, `[[cut]] ${TWO_TOOLS}`, true);
    expect((await stream.rest()).filter((e) => e.type === "retry").length).toBe(3);
    await expectIntact(started.agentId, started.runId, started.sessionId, started.bucket);
  },
  evict_mid_webhook: async (provider, round) => {
    const { started, stream } = await start(provider, round);
    await callsReceived(started.bucket, 2);
    const calls = await evict(started, stream);
    // The one documented crash window: the call in flight is sent again, with the same key.
    expect(calls.map((c) => c.body.name)).toEqual(["first", "second", "second"]);
  },
  evict_at_step_boundary: async (provider, round) => {
    const { started, stream } = await start(provider, round);
    await stream.until("tool_call_completed");
    await evict(started, stream);
  },
  evict_mid_model_call: async (provider, round) => {
    const { started, stream } = await start(provider, round, `[[slow 400]] ${TWO_TOOLS}`);
    await stream.until("model_request_started");
    await evict(started, stream);
  },
  queue_delivered_3_times: async (provider, round) => {
    const sessionId = `fault-queue-${crypto.randomUUID()}`;
    const bucket = crypto.randomUUID();
    const agent = await faultAgent(provider, bucket, round);
    await openGate(bucket);
    const held = await holdRunQueue(sessionId);
    // Held in the queue, the run stays pending (no run_started yet): take its id from the 202 answer.
    const accepted = await (await postRun(agent.id, { input: TWO_TOOLS, session_id: sessionId, background: true })).json<{
      run_id: string;
    }>();
    expect(held).toHaveLength(1);
    const result = await deliverRunMessages([held[0], held[0], held[0]]);
    expect(result.retryMessages).toEqual([]);
    const calls = await expectIntact(agent.id, accepted.run_id, sessionId, bucket);
    expect(calls.map((c) => c.body.name)).toEqual(["first", "second"]);
  },
  alarm_fired_twice: async (provider, round) => {
    const { started, stream } = await start(provider, round);
    await callsReceived(started.bucket, 2);
    const stub = sessionStub(started.sessionId);
    for (let ring = 0; ring < 2; ring++) {
      await runInDurableObject(stub, (_i, state) => state.storage.sql.exec("UPDATE timers SET due_at = 0"));
      await runDurableObjectAlarm(stub);
    }
    await openGate(started.bucket);
    await stream.rest();
    await expectIntact(started.agentId, started.runId, started.sessionId, started.bucket);
  },
  cancel_races_completion: async (provider, round) => {
    const { started, stream } = await start(provider, round);
    await callsReceived(started.bucket, 2);
    const [cancel] = await Promise.all([
      api(`/v1/agents/${started.agentId}/runs/${started.runId}/cancel`, { method: "POST" }),
      openGate(started.bucket),
    ]);
    await stream.rest();
    // A genuine race: cancel answers 200 with the run it cancelled or with the terminal status the run
    // already had (docs/api.md), and the stored run, transcript and events must agree with that answer.
    expect(cancel.status).toBe(200);
    const outcome = (await cancel.json<Run>()).status as "cancelled" | "completed";
    await expectIntact(started.agentId, started.runId, started.sessionId, started.bucket, outcome);
  },
  cancel_races_delete: async (provider, round) => {
    const { started, stream } = await start(provider, round);
    await callsReceived(started.bucket, 2);
    const [cancel, removed] = await Promise.all([
      api(`/v1/agents/${started.agentId}/runs/${started.runId}/cancel`, { method: "POST" }),
      api(`/v1/sessions/${started.sessionId}`, { method: "DELETE" }),
      openGate(started.bucket),
    ]);
    await stream.rest();
    expect(removed.status).toBe(204);
    // The subject here is the delete; the cancel lands before it (200) or finds the session gone (404), never a 5xx.
    expect(cancel.status).toBeLessThan(500);
    // Deleted: nothing of the session answers or stays in D1, and the id takes a new turn.
    expect((await api(`/v1/sessions/${started.sessionId}/transcript`)).status).toBe(404);
    const left = await env.DB.prepare(
      "SELECT (SELECT count(*) FROM messages WHERE session_id = ?1) AS messages, (SELECT count(*) FROM runs WHERE session_id = ?1 AND status IN ('pending', 'running')) AS live_runs",
    )
      .bind(started.sessionId)
      .first();
    const events = await env.DB.prepare("SELECT seq, type FROM events WHERE session_id = ?").bind(started.sessionId).all();
    expect({ ...left, events: events.results }).toEqual({ messages: 0, live_runs: 0, events: [] });
    const { started: again, stream: next } = await start(provider, round, TWO_TOOLS, true, started.sessionId);
    await next.rest();
    await expectIntact(again.agentId, again.runId, again.sessionId, again.bucket);
  },
  cancel_races_continue: async (provider, round) => {
    const ask = { type: "client", name: "ask_user", parameters: { type: "object", properties: {} } };
    const agent = await createAgent({
      provider,
      model: "mock-1",
      base_url: round % 2 === 0 ? "mock:" : loopbackOf(provider),
      tools: [ask],
    });
    const sessionId = `fault-continue-${crypto.randomUUID()}`;
    const paused = await runTurn(agent.id, { input: "[[tool ask_user {}]] go", session_id: sessionId });
    expect(paused.status).toBe("paused");
    const answer = { tool_results: [{ tool_call_id: paused.required_actions[0]!.tool_call_id, output: "yes" }] };
    const [continued, cancel] = await Promise.all([
      api(`/v1/agents/${agent.id}/runs/${paused.id}/continue`, { body: answer }),
      api(`/v1/agents/${agent.id}/runs/${paused.id}/cancel`, { method: "POST" }),
    ]);
    // A genuine race, with three legal ends: the continue finishes first (both answer completed); the
    // continue starts and the cancel stops it (both answer cancelled, the result counted); the cancel
    // lands first and the continue, whose call is no longer pending, answers the run as it is
    // (cancelled, nothing counted: docs/tools.md). Everything stored must agree with what the client saw.
    expect(cancel.status).toBe(200);
    const outcome = (await cancel.json<Run>()).status;
    expect(continued.status).toBe(200);
    const continuedRun = await continued.json<Run>();
    expect([
      ["completed", "completed"],
      ["cancelled", "cancelled"],
    ]).toContainEqual([outcome, continuedRun.status]);
    const run = await (await api(`/v1/agents/${agent.id}/runs/${paused.id}?wait=20`)).json<Run>();
    expect(run.status).toBe(outcome);
    const events = (await (await api(`/v1/agents/${agent.id}/runs/${paused.id}/events`)).json<{ data: RunEvent[] }>()).data;
    const seqs = events.map((e) => e.seq);
    expect(seqs).toEqual(seqs.map((_, i) => seqs[0]! + i));
    expect(events.filter((e) => ["run_completed", "run_cancelled", "run_error"].includes(e.type)).map((e) => e.type)).toEqual([
      `run_${outcome}`,
    ]);
    const transcript = await transcriptOf(sessionId);
    expect(transcript.map((m) => m.index)).toEqual(transcript.map((_, i) => i));
    // The tool's answer is recorded once when the continue was accepted, never when the cancel came first.
    expect(transcript.filter((m) => m.role === "tool").length).toBe(continuedRun.metrics.tool_calls);
    const mirrored = await eventually(
      () => mirroredMessages(sessionId),
      (rows) => rows.length >= transcript.length,
    );
    expect(mirrored.map((m) => m.idx)).toEqual(transcript.map((m) => m.index));
    expect((await runTurn(agent.id, { input: "next turn", session_id: sessionId })).status).toBe("completed");
    await expectNoStoredSecrets(sessionId);
  },
  d1_failing: async (provider, round) => {
    const sessionId = `fault-d1-${crypto.randomUUID()}`;
    let failed = 0;
    await wrapSessionD1(sessionId, async (statements, send) => {
      // The first two batches that write transcript rows fail as D1 would; the outbox must retry them.
      if (failed < 2 && statements.some((s) => /INTO "?messages"?\s/i.test(s.sql))) {
        failed += 1;
        throw new Error("D1_ERROR: injected failure");
      }
      return send();
    });
    const { started, stream } = await start(provider, round, TWO_TOOLS, true, sessionId);
    await stream.rest();
    expect(failed).toBe(2);
    await expectIntact(started.agentId, started.runId, started.sessionId, started.bucket);
  },
  d1_failing_at_run_end: async (provider, round) => {
    const sessionId = `fault-d1-end-${crypto.randomUUID()}`;
    let failed = 0;
    await wrapSessionD1(sessionId, async (statements, send) => {
      // The batches that write the finished run fail twice as D1 would (under the quarantine's 3): the outbox retries them.
      if (failed < 2 && writesRunStatus("completed")(statements)) {
        failed += 1;
        throw new Error("D1_ERROR: injected failure");
      }
      return send();
    });
    const { started, stream } = await start(provider, round, TWO_TOOLS, true, sessionId);
    await stream.rest();
    await expectIntact(started.agentId, started.runId, started.sessionId, started.bucket);
    const mirrored = await eventually(
      async () => (await env.DB.prepare("SELECT status FROM runs WHERE id = ?").bind(started.runId).first<{ status: string }>())?.status,
      (status) => status === "completed",
    );
    expect({ failed, mirrored }).toEqual({ failed: 2, mirrored: "completed" });
  },
  d1_slow: async (provider, round) => {
    const sessionId = `fault-d1-slow-${crypto.randomUUID()}`;
    let slowed = 0;
    await wrapSessionD1(sessionId, async (_statements, send) => {
      slowed += 1;
      await scheduler.wait(150);
      return send();
    });
    const { started, stream } = await start(provider, round, TWO_TOOLS, true, sessionId);
    await stream.rest();
    expect(slowed).toBeGreaterThan(0);
    await expectIntact(started.agentId, started.runId, started.sessionId, started.bucket);
  },
};

describe("faults", () => {
  for (const [kind, inject] of Object.entries(faults)) {
    it(`${kind}: on every provider, ${ROUNDS} rounds, the run ends right with nothing lost or doubled`, async (context) => {
      for (let round = 0; round < ROUNDS; round++) {
        for (const provider of PROVIDERS) {
          await inject(provider, round);
          survived(context, kind);
        }
      }
      for (const [name, scanned] of Object.entries(storedScan)) count(context, "secrets", name, scanned);
      for (const name of Object.keys(storedScan)) storedScan[name as keyof typeof storedScan] = 0;
    });
  }
});
