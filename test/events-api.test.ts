import { abortAllDurableObjects, evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { openSse } from "../src/session/stream/sse";
import { SseReader, isStrictlyIncreasing, storedEvents, textOf, watchRun, type RunEvent } from "./support/events";
import { ADMIN_TOKEN, api, createAgent, createTenantToken } from "./support/http";
import { mirrorCaughtUp } from "./support/run-queue";
import { postRun, readEvents, runTurn, type Run } from "./support/runs";
import { gateTool, openGate } from "./support/tool-server";
import { mirroredEventRows } from "./support/mirror";

const stubOf = (sessionId: string) => env.SESSION.get(env.SESSION.idFromName(`default/${sessionId}`));
const sessionIdFor = (name: string) => `${name}-${crypto.randomUUID()}`;

const mirroredEvents = async (sessionId: string) => (await mirroredEventRows("session_id", sessionId)).length;

/** The session's events in the D1 mirror, once the object has copied what its runs wrote (just after a run's terminal event). */
async function mirroredEventsSettled(sessionId: string) {
  await mirrorCaughtUp(sessionId);
  return mirroredEvents(sessionId);
}

const runStatus = async (agentId: string, runId: string) => (await (await api(`/v1/agents/${agentId}/runs/${runId}`)).json<Run>()).status;

describe("GET …/runs/{run_id}/events (JSON)", () => {
  it("stores every event of a run, each content delta included, exactly as the stream sent them", async () => {
    const agent = await createAgent();
    const sessionId = sessionIdFor("stored");
    const streamed = await readEvents(await postRun(agent.id, { input: "[[words 12]]", session_id: sessionId, stream: true }));
    const runId = streamed[0]!.run_id;
    const stored = await storedEvents(agent.id, runId);
    expect(stored).toEqual(streamed);
    expect(stored.map((e) => e.type)).toEqual([
      "run_started",
      "model_request_started",
      ...Array<string>(stored.length - 5).fill("content_delta"),
      "model_request_completed",
      "checkpoint",
      "run_completed",
    ]);
    expect(stored.filter((e) => e.type === "content_delta").length).toBeGreaterThanOrEqual(12);
    expect(textOf(stored)).toBe(stored.at(-1)?.data.output);
    // The D1 mirror gets every one of them too.
    expect(await mirroredEventsSettled(sessionId)).toBe(stored.length);
  });

  it("answers only the events after `after`", async () => {
    const agent = await createAgent();
    const run = await runTurn(agent.id, { input: "one two three four" });
    const all = await storedEvents(agent.id, run.id);
    expect(all.length).toBeGreaterThan(6);
    expect(await storedEvents(agent.id, run.id, all[3]!.seq)).toEqual(all.slice(4));
    expect(await storedEvents(agent.id, run.id, all.at(-1)!.seq)).toEqual([]);
    expect(await storedEvents(agent.id, run.id, 0)).toEqual(all);
  });

  it("keeps a session's seqs strictly increasing and never reused across runs, an eviction and an abort", async () => {
    const agent = await createAgent();
    const sessionId = sessionIdFor("seqs");
    const first = await runTurn(agent.id, { input: "one", session_id: sessionId });
    await evictDurableObject(stubOf(sessionId));
    const second = await runTurn(agent.id, { input: "two", session_id: sessionId });
    await abortAllDurableObjects();
    const third = await runTurn(agent.id, { input: "three", session_id: sessionId });
    const perRun = [
      await storedEvents(agent.id, first.id),
      await storedEvents(agent.id, second.id),
      await storedEvents(agent.id, third.id),
    ];
    for (const [i, events] of perRun.entries()) {
      expect(events[0]?.type, `run ${i}`).toBe("run_started");
      expect(events.at(-1)?.type, `run ${i}`).toBe("run_completed");
      expect(new Set(events.map((e) => e.run_id)).size).toBe(1);
    }
    expect(isStrictlyIncreasing(perRun.flat().map((e) => e.seq))).toBe(true);
  });

  it("serves old events from D1 once the object's storage is wiped, and new seqs start above them", async () => {
    const agent = await createAgent();
    const sessionId = sessionIdFor("rebuilt");
    const first = await runTurn(agent.id, { input: "[[words 6]]", session_id: sessionId });
    const before = await storedEvents(agent.id, first.id);
    expect(await mirroredEventsSettled(sessionId)).toBe(before.length);
    await runInDurableObject(stubOf(sessionId), async (_instance, state) => {
      await state.storage.deleteAll();
    });

    expect(await storedEvents(agent.id, first.id)).toEqual(before);
    expect(await storedEvents(agent.id, first.id, before[2]!.seq)).toEqual(before.slice(3));
    const resumed = await new SseReader(await watchRun(agent.id, first.id, { lastEventId: before[1]!.seq })).rest();
    expect(resumed).toEqual(before.slice(2));

    const second = await runTurn(agent.id, { input: "again", session_id: sessionId });
    const next = await storedEvents(agent.id, second.id);
    expect(next[0]!.seq).toBeGreaterThan(before.at(-1)!.seq);
    expect(next.at(-1)?.type).toBe("run_completed");
    // Both runs are served: the old one from D1, the new one from the object's own log.
    expect(await storedEvents(agent.id, first.id)).toEqual(before);
  });

  it("stores nothing when the agent has store_events false: the route answers no events", async () => {
    const agent = await createAgent({ store_events: false });
    const sessionId = sessionIdFor("unstored");
    const streamed = await readEvents(await postRun(agent.id, { input: "keep it quiet", session_id: sessionId, stream: true }));
    expect(streamed.at(-1)?.type).toBe("run_completed");
    const runId = streamed[0]!.run_id;
    expect(await storedEvents(agent.id, runId)).toEqual([]);
    const replay = await watchRun(agent.id, runId);
    expect(replay.status).toBe(200);
    expect(await new SseReader(replay).rest()).toEqual([]);
    expect(await mirroredEvents(sessionId)).toBe(0);

    // A watcher of a live run still sees its live events, from the moment it subscribed.
    const post = new SseReader(await postRun(agent.id, { input: "[[slow 400]] still live", session_id: sessionId, stream: true }));
    const [started] = await post.take(1);
    const live = await new SseReader(await watchRun(agent.id, started!.run_id)).rest();
    const rest = await post.rest();
    expect(live.at(-1)?.type).toBe("run_completed");
    expect(rest.slice(rest.length - live.length)).toEqual(live);
  });

  it("answers 404 for another tenant's run or an unknown one, 401 without a token, 400 for a bad seq", async () => {
    const agent = await createAgent();
    const run = await runTurn(agent.id, { input: "mine" });
    const other = await createTenantToken();
    const path = `/v1/agents/${agent.id}/runs/${run.id}/events`;
    for (const response of [
      await api(path, {}, other),
      await watchRun(agent.id, run.id, { token: other }),
      await api(`/v1/agents/${agent.id}/runs/run_nope/events`),
    ]) {
      expect(response.status).toBe(404);
      expect((await response.json<{ error: { type: string } }>()).error.type).toBe("not_found");
    }
    expect((await api(path, {}, null)).status).toBe(401);
    expect((await api(`${path}?after=-1`)).status).toBe(400);
    expect((await api(`${path}?after=abc`)).status).toBe(400);
    expect((await api(`${path}?since=3`)).status).toBe(400);
    expect((await watchRun(agent.id, run.id, { lastEventId: Number.NaN })).status).toBe(400);
  });
});

describe("GET …/runs/{run_id}/events (SSE)", () => {
  it("replays the stored events, then tails the live ones until the run's terminal event", async () => {
    const bucket = crypto.randomUUID();
    const agent = await createAgent({ tools: [gateTool(bucket)] });
    const post = new SseReader(await postRun(agent.id, { input: "[[tool wait {}]] [[words 8]]", stream: true }));
    const head = await post.until("tool_call_started");
    const runId = head[0]!.run_id;
    const response = await watchRun(agent.id, runId);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    // The watcher subscribed while the run waits at the gate: what follows comes live.
    expect(await runStatus(agent.id, runId)).toBe("running");
    await openGate(bucket);
    const watched = await new SseReader(response).rest();
    const all = [...head, ...(await post.rest())];
    expect(watched).toEqual(all);
    expect(watched.at(-1)?.type).toBe("run_completed");
    expect(isStrictlyIncreasing(watched.map((e) => e.seq))).toBe(true);
  });

  it("gives every watcher the full sequence", async () => {
    const agent = await createAgent();
    const post = new SseReader(await postRun(agent.id, { input: "[[slow 400]] [[words 10]]", stream: true }));
    const [first] = await post.take(1);
    const watchers = (await Promise.all([watchRun(agent.id, first!.run_id), watchRun(agent.id, first!.run_id, { after: 0 })])).map(
      (r) => new SseReader(r),
    );
    const [a, b, rest] = await Promise.all([watchers[0]!.rest(), watchers[1]!.rest(), post.rest()]);
    const full = [first!, ...rest];
    expect(full.at(-1)?.type).toBe("run_completed");
    expect(a).toEqual(full);
    expect(b).toEqual(full);
  });

  it("resumes a lost stream from Last-Event-ID with no gap and no duplicate, while the run goes on", async () => {
    const bucket = crypto.randomUUID();
    const agent = await createAgent({ tools: [gateTool(bucket)] });
    const post = new SseReader(await postRun(agent.id, { input: "[[tool wait {}]] [[words 30]]", stream: true }));
    const seen = await post.until("tool_call_started");
    await post.cancel();
    const runId = seen[0]!.run_id;
    // The client is gone; the run, held at the gate, is not.
    expect(await runStatus(agent.id, runId)).toBe("running");
    await openGate(bucket);
    // Last-Event-ID wins over the `after` of the URL (an EventSource reconnects to the same URL).
    const resumed = await watchRun(agent.id, runId, { lastEventId: seen.at(-1)!.seq, query: "?after=0" });
    expect(resumed.status).toBe(200);
    const rest = await new SseReader(resumed).rest();
    expect(rest[0]!.seq).toBeGreaterThan(seen.at(-1)!.seq);
    const whole = [...seen, ...rest];
    expect(whole).toEqual(await storedEvents(agent.id, runId));
    expect(whole.at(-1)?.type).toBe("run_completed");
    // The answer is the text of the step after the tool's.
    expect(textOf(whole.filter((e) => e.data.step === 2))).toBe(whole.at(-1)?.data.output);
    expect(isStrictlyIncreasing(whole.map((e) => e.seq))).toBe(true);
  });

  it("replays a finished run after an eviction and closes after the replay", async () => {
    const agent = await createAgent();
    const sessionId = sessionIdFor("evicted");
    const run = await runTurn(agent.id, { input: "one two three", session_id: sessionId });
    const all = await storedEvents(agent.id, run.id);
    await evictDurableObject(stubOf(sessionId));
    const resumed = await new SseReader(await watchRun(agent.id, run.id, { lastEventId: all[2]!.seq })).rest();
    expect(resumed).toEqual(all.slice(3));
  });

  it("ends a paused run's stream after run_paused; the continued stretch is watched from there", async () => {
    const agent = await createAgent({ tools: [{ type: "client", name: "ask", parameters: { type: "object", properties: {} } }] });
    const paused = await runTurn(agent.id, { input: "[[tool ask {}]] hello" });
    const replay = await new SseReader(await watchRun(agent.id, paused.id)).rest();
    expect(replay.at(-1)?.type).toBe("run_paused");
    const pausedAt = replay.at(-1)!.seq;
    expect(await new SseReader(await watchRun(agent.id, paused.id, { after: pausedAt })).rest()).toEqual([]);

    const continued = await api(`/v1/agents/${agent.id}/runs/${paused.id}/continue`, {
      body: { tool_results: [{ tool_call_id: paused.required_actions[0]!.tool_call_id, output: "42" }] },
    });
    expect((await continued.json<Run>()).status).toBe("completed");
    const stretch = await new SseReader(await watchRun(agent.id, paused.id, { lastEventId: pausedAt })).rest();
    expect(stretch[0]?.type).toBe("run_continued");
    expect(stretch.at(-1)?.type).toBe("run_completed");
    expect([...replay, ...stretch]).toEqual(await storedEvents(agent.id, paused.id));
  });

  it("takes the token from ?token= (EventSource cannot set headers)", async () => {
    const agent = await createAgent();
    const run = await runTurn(agent.id, { input: "by query" });
    const response = await watchRun(agent.id, run.id, { token: null, query: `?token=${ADMIN_TOKEN}&after=0` });
    expect(response.status).toBe(200);
    const events: RunEvent[] = await new SseReader(response).rest();
    expect(events).toEqual(await storedEvents(agent.id, run.id));
    expect((await watchRun(agent.id, run.id, { token: null, query: "?token=wrong" })).status).toBe(401);
  });
});

describe("SSE heartbeat", () => {
  it("sends a `: ping` comment on an idle stream", async () => {
    const { readable, sink } = openSse(20);
    const reader = readable.getReader();
    const chunk = await reader.read();
    expect(new TextDecoder().decode(chunk.value)).toBe(": ping\n\n");
    sink.close();
    await reader.cancel();
  });
});
