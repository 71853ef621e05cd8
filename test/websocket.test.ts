import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { SessionObject } from "../src/session/object/session-object";
import { connectSocket, isStrictlyIncreasing, openSocket, storedEvents, type RunEvent } from "./support/events";
import { ADMIN_TOKEN, api, createAgent, createTenantToken } from "./support/http";
import { postRun, runTurn } from "./support/runs";

const stubOf = (sessionId: string) => env.SESSION.get(env.SESSION.idFromName(`default/${sessionId}`));
const sessionIdFor = (name: string) => `${name}-${crypto.randomUUID()}`;
const ends = (runId: string) => (e: RunEvent) => e.run_id === runId && e.type === "run_completed";

/** A session with one finished run, so that it exists (a socket of an unknown session is 404). */
async function sessionWithRun(name: string) {
  const agent = await createAgent();
  const sessionId = sessionIdFor(name);
  const first = await runTurn(agent.id, { input: "first", session_id: sessionId });
  return { agent, sessionId, first };
}

describe("GET /v1/sessions/{session_id}/ws", () => {
  it("receives every event of every run of the session, as stored", async () => {
    const { agent, sessionId } = await sessionWithRun("ws-events");
    const socket = await openSocket(sessionId);
    const second = runTurn(agent.id, { input: "second", session_id: sessionId });
    const run2 = await second;
    const got2 = await socket.eventsUntil(ends(run2.id));
    const run3 = await runTurn(agent.id, { input: "third", session_id: sessionId });
    const got3 = await socket.eventsUntil(ends(run3.id));
    expect(got2).toEqual(await storedEvents(agent.id, run2.id));
    expect(got3).toEqual(await storedEvents(agent.id, run3.id));
    expect(isStrictlyIncreasing([...got2, ...got3].map((e) => e.seq))).toBe(true);
    socket.close();
  });

  it("answers the exact ping with the exact pong, also a ping spelled differently", async () => {
    const { sessionId } = await sessionWithRun("ws-ping");
    const socket = await openSocket(sessionId);
    socket.send('{"type":"ping"}');
    expect(await socket.nextMessage()).toBe('{"type":"pong"}');
    socket.send('{ "type": "ping" }');
    expect(await socket.nextMessage()).toBe('{"type":"pong"}');
    // The exact one is answered by the runtime's auto-response, without the object's handler.
    const answered = await runInDurableObject(stubOf(sessionId), (_instance: SessionObject, state) =>
      state.getWebSockets().map((ws) => state.getWebSocketAutoResponseTimestamp(ws) !== null),
    );
    expect(answered).toEqual([true]);
    socket.close();
  });

  it("answers a bad message with an error frame and keeps the socket open", async () => {
    const { agent, sessionId } = await sessionWithRun("ws-bad");
    const socket = await openSocket(sessionId);
    for (const bad of [
      "not json",
      '{"type":"subscribe","after":-1}',
      '{"type":"subscribe"}',
      '{"type":"dance"}',
      '{"type":"ping","extra":1}',
      "[]",
    ]) {
      socket.send(bad);
      const frame = JSON.parse(await socket.nextMessage()) as {
        type: string;
        error: { type: string; message: string; details: { fields: unknown[] } };
      };
      expect(frame.type, bad).toBe("error");
      expect(frame.error.type, bad).toBe("invalid_request");
      expect(frame.error.message, bad).toBeTruthy();
      expect(frame.error.details.fields.length, bad).toBeGreaterThan(0);
    }
    expect(socket.closed).toBeNull();
    const run = await runTurn(agent.id, { input: "still here", session_id: sessionId });
    expect((await socket.eventsUntil(ends(run.id))).at(-1)?.data.output).toBe("You said: still here");
    socket.close();
  });

  it("replays the stored events after N on subscribe, then goes on live", async () => {
    const { agent, sessionId, first } = await sessionWithRun("ws-subscribe");
    const second = await runTurn(agent.id, { input: "second", session_id: sessionId });
    const history = [...(await storedEvents(agent.id, first.id)), ...(await storedEvents(agent.id, second.id))];
    const socket = await openSocket(sessionId);
    const from = history[3]!.seq;
    socket.send(JSON.stringify({ type: "subscribe", after: from }));
    expect(await socket.nextMessage()).toBe(`{"type":"subscribed","after":${from}}`);
    expect(await socket.eventsUntil(ends(second.id))).toEqual(history.slice(4));
    const third = await runTurn(agent.id, { input: "third", session_id: sessionId });
    expect(await socket.eventsUntil(ends(third.id))).toEqual(await storedEvents(agent.id, third.id));
    // subscribe after 0: the whole session again, nothing more.
    socket.send('{"type":"subscribe","after":0}');
    expect(await socket.nextMessage()).toBe('{"type":"subscribed","after":0}');
    const all = await socket.eventsUntil(ends(third.id));
    expect(all).toEqual([...history, ...(await storedEvents(agent.id, third.id))]);
    expect(await socket.quietFor(100)).toEqual([]);
    socket.close();
  });

  it("subscribes in the middle of a live run: the replay joins the live events with no gap and no duplicate", async () => {
    const { agent, sessionId } = await sessionWithRun("ws-midrun");
    const socket = await openSocket(sessionId);
    const running = postRun(agent.id, { input: "[[slow 300]] [[words 20]]", session_id: sessionId, stream: true });
    const head = await socket.eventsUntil((e) => e.type === "content_delta");
    const runId = head[0]!.run_id;
    socket.send(JSON.stringify({ type: "subscribe", after: head[0]!.seq }));
    // Live events may reach the socket before the server takes the subscribe: the ack marks where its replay begins.
    for (
      let message = await socket.nextMessage();
      message !== `{"type":"subscribed","after":${head[0]!.seq}}`;
      message = await socket.nextMessage()
    ) {
      expect(JSON.parse(message)).toHaveProperty("seq");
    }
    const received = await socket.eventsUntil(ends(runId));
    await (await running).text();
    // From the replay's start to the run's end: each event once, none missing.
    expect(received).toEqual((await storedEvents(agent.id, runId)).slice(1));
    socket.close();
  });

  it("keeps the socket through hibernation: the next run's events still arrive on it", async () => {
    const { agent, sessionId } = await sessionWithRun("ws-hibernate");
    const socket = await openSocket(sessionId);
    const before = await runTurn(agent.id, { input: "before", session_id: sessionId });
    expect((await socket.eventsUntil(ends(before.id))).at(-1)?.data.output).toBe("You said: before");

    let instance: SessionObject | null = null;
    await runInDurableObject(stubOf(sessionId), (object: SessionObject) => {
      instance = object;
    });
    await evictDurableObject(stubOf(sessionId), { webSockets: "hibernate" });
    // The exact ping is answered while the object is out of memory.
    socket.send('{"type":"ping"}');
    expect(await socket.nextMessage()).toBe('{"type":"pong"}');

    const after = await runTurn(agent.id, { input: "after", session_id: sessionId });
    const events = await socket.eventsUntil(ends(after.id));
    expect(events).toEqual(await storedEvents(agent.id, after.id));
    const woken = await runInDurableObject(stubOf(sessionId), (object: SessionObject, state) => ({
      same: object === instance,
      sockets: state.getWebSockets().length,
    }));
    // A new instance served the second run, and it found the old socket again.
    expect(woken).toEqual({ same: false, sockets: 1 });
    expect(socket.closed).toBeNull();
    // A subscribe after the wake replays from the stored log (the attachment kept who the socket is).
    socket.send(JSON.stringify({ type: "subscribe", after: events[0]!.seq }));
    expect(JSON.parse(await socket.nextMessage())).toEqual({ type: "subscribed", after: events[0]!.seq });
    expect(await socket.eventsUntil(ends(after.id))).toEqual(events.slice(1));
    socket.close();
  });

  it("sends every event to every socket; a closed one does not hold up the others", async () => {
    const { agent, sessionId } = await sessionWithRun("ws-fanout");
    const [a, b, c] = await Promise.all([openSocket(sessionId), openSocket(sessionId), openSocket(sessionId)]);
    c!.close();
    const run = await runTurn(agent.id, { input: "fan out", session_id: sessionId });
    const stored = await storedEvents(agent.id, run.id);
    expect(await a!.eventsUntil(ends(run.id))).toEqual(stored);
    expect(await b!.eventsUntil(ends(run.id))).toEqual(stored);
    a!.close();
    b!.close();
  });

  it("closes the session's sockets when the session is deleted, after its run's run_cancelled", async () => {
    const { agent, sessionId } = await sessionWithRun("ws-delete");
    const socket = await openSocket(sessionId);
    const running = postRun(agent.id, { input: "[[slow 3000]] long", session_id: sessionId, stream: true });
    const [started] = await socket.eventsUntil((e) => e.type === "model_request_started");
    expect((await api(`/v1/sessions/${sessionId}`, { method: "DELETE" })).status).toBe(204);
    const rest = await socket.eventsUntil((e) => e.type === "run_cancelled");
    expect(rest.at(-1)).toMatchObject({ run_id: started!.run_id, data: { reason: "session deleted" } });
    await (await running).text();
    await expect(socket.nextMessage(2000)).rejects.toThrow(/socket closed \(1000\)/);
  });

  it("authenticates like every route: 401 without a token, ?token= for browsers, 404 for a foreign or unknown session", async () => {
    const { sessionId } = await sessionWithRun("ws-auth");
    const anonymous = await connectSocket(sessionId, { token: null });
    expect(anonymous.response.status).toBe(401);
    expect(anonymous.socket).toBeNull();
    expect((await connectSocket(sessionId, { token: null, query: "?token=wrong" })).response.status).toBe(401);

    const viaQuery = await connectSocket(sessionId, { token: null, query: `?token=${ADMIN_TOKEN}` });
    expect(viaQuery.response.status).toBe(101);
    viaQuery.socket!.send('{"type":"ping"}');
    expect(await viaQuery.socket!.nextMessage()).toBe('{"type":"pong"}');
    viaQuery.socket!.close();

    const foreign = await connectSocket(sessionId, { token: await createTenantToken() });
    expect(foreign.response.status).toBe(404);
    expect((await foreign.response.json<{ error: { type: string } }>()).error.type).toBe("not_found");
    expect((await connectSocket(sessionIdFor("nobody"))).response.status).toBe(404);
    const notUpgrade = await connectSocket(sessionId, { upgrade: false });
    expect(notUpgrade.response.status).toBe(400);
  });
});
