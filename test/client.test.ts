import { describe, expect, it } from "vitest";
import { AgentryError, AgentryStreamError, type AgentryEvent } from "../client/index.ts";
import { cuttingFetch, testClient } from "./support/client";
import { HOLD_MODEL } from "./support/runs";
import { deliverRunMessages, holdRunQueue } from "./support/run-queue";

const mockAgent = { name: "client test", provider: "mock", model: "mock-1" } as const;
const collect = async (events: AsyncIterable<AgentryEvent>) => {
  const all: AgentryEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
};
const textOf = (events: AgentryEvent[]) => events.map((event) => (event.type === "content_delta" ? event.data.text : "")).join("");

describe("typed client (client/)", () => {
  it("creates an agent and runs a blocking turn", async () => {
    const client = testClient();
    const agent = await client.createAgent(mockAgent);
    expect(agent.provider).toBe("mock");
    const run = await client.run(agent.id, { input: "Hello" });
    expect(run).toMatchObject({ status: "completed", output: "You said: Hello", agent_id: agent.id });
  });

  it("throws the API's error as an AgentryError with status, type and field", async () => {
    const client = testClient();
    const invalid = await client.createAgent({ ...mockAgent, provider: "nope" as "mock" }).catch((error: unknown) => error);
    expect(invalid).toBeInstanceOf(AgentryError);
    expect(invalid).toMatchObject({ status: 400, type: "invalid_request", field: "provider" });
    const missing = await client.getAgent("agt_missing").catch((error: unknown) => error);
    expect(missing).toMatchObject({ status: 404, type: "not_found" });
    const unauthorized = await testClient({ token: "wrong" })
      .getAgent("x")
      .catch((error: unknown) => error);
    expect(unauthorized).toMatchObject({ status: 401, type: "unauthorized" });
  });

  it("runs in the background and waits for the run with ?wait=", async () => {
    const client = testClient();
    const agent = await client.createAgent(mockAgent);
    const sessionId = `bg-${crypto.randomUUID()}`;
    const sent = await holdRunQueue(sessionId);
    const started = await client.runInBackground(agent.id, { input: "Later", session_id: sessionId });
    expect(started).toMatchObject({ session_id: sessionId, status: "pending" });
    const waiting = client.waitForRun(agent.id, started.run_id);
    await deliverRunMessages(sent);
    expect(await waiting).toMatchObject({ id: started.run_id, status: "completed", output: "You said: Later" });
  });

  it("streams a turn as typed events, ending with its terminal event", async () => {
    const client = testClient();
    const agent = await client.createAgent(mockAgent);
    const events = await collect(client.stream(agent.id, { input: "[[words 6]]" }));
    expect(events[0]?.type).toBe("run_started");
    expect(events.at(-1)?.type).toBe("run_completed");
    expect(textOf(events).split(" ")).toHaveLength(6);
  });

  it("resumes a stream cut mid-way from the last seq: every event once, in seq order", async () => {
    const cut = cuttingFetch(3);
    const client = testClient({ fetch: cut.fetch });
    const agent = await client.createAgent(mockAgent);
    const events = await collect(client.stream(agent.id, { input: "[[words 20]]" }));
    const runId = events[0]!.run_id;
    const stored = await testClient().listEvents(agent.id, runId);
    expect(events.map((event) => event.seq)).toEqual(stored.map((event) => event.seq));
    expect(events.at(-1)?.type).toBe("run_completed");
    expect(cut.connections()).toBeGreaterThan(5); // each connection carried at most 3 events
    expect(textOf(events).split(" ")).toHaveLength(20);
  });

  it("gives up with AgentryStreamError when the stream breaks before its first event", async () => {
    const client = testClient({ fetch: cuttingFetch(0).fetch });
    const agent = await client.createAgent(mockAgent);
    const error = await collect(client.stream(agent.id, { input: "Hi" })).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AgentryStreamError);
  });

  it("cancels a running run; its stream ends with run_cancelled", async () => {
    const client = testClient();
    const agent = await client.createAgent(mockAgent);
    const stream = client.stream(agent.id, { input: HOLD_MODEL });
    const first = (await stream.next()).value as AgentryEvent;
    expect(first.type).toBe("run_started");
    const cancelled = await client.cancel(agent.id, first.run_id);
    expect(cancelled.id).toBe(first.run_id);
    const rest = await collect(stream);
    expect(rest.at(-1)?.type).toBe("run_cancelled");
    expect((await client.getRun(agent.id, first.run_id)).status).toBe("cancelled");
  });

  it("continues a paused run with the results of its client tool", async () => {
    const client = testClient();
    const agent = await client.createAgent({
      ...mockAgent,
      tools: [{ type: "client", name: "ask", parameters: { type: "object", properties: {} } }],
    });
    const paused = await client.run(agent.id, { input: "[[tool ask {}]]" });
    expect(paused.status).toBe("paused");
    const action = paused.required_actions[0]!;
    const done = await client.submitToolResults(agent.id, paused.id, [{ tool_call_id: action.tool_call_id, output: "blue" }]);
    expect(done).toMatchObject({ id: paused.id, status: "completed" });
    expect(done.output).toContain("ask returned: blue");
  });

  it("queues a turn on a busy session, steers the running one, and approves a gated tool call", async () => {
    const client = testClient();
    const agent = await client.createAgent({
      ...mockAgent,
      tools: [{ type: "builtin", name: "current_time", requires_approval: true }],
    });
    const paused = await client.run(agent.id, { input: "[[tool current_time {}]] what time is it?" });
    expect(paused.required_actions).toEqual([{ type: "approval", tool_call_id: expect.any(String), name: "current_time", arguments: {} }]);
    // The session is held: a queued turn waits, a steer goes to the queue too (the run is paused).
    const queued = await client.runInBackground(agent.id, { input: "next", session_id: paused.session_id, on_busy: "enqueue" });
    expect(queued.status).toBe("queued");
    const steered = await client.steer(agent.id, paused.session_id, "and the date?");
    expect(steered).toMatchObject({ run_id: paused.id, steer_id: expect.stringMatching(/^str_/) });
    const done = await client.approve(agent.id, paused.id, [{ tool_call_id: paused.required_actions[0]!.tool_call_id, approve: true }]);
    expect(done).toMatchObject({ id: paused.id, status: "completed" });
    expect(await client.waitForRun(agent.id, steered.steered_into, { timeoutSeconds: 20 })).toMatchObject({
      status: "completed",
      output: "You said: and the date?",
    });
    expect(await client.waitForRun(agent.id, queued.run_id, { timeoutSeconds: 20 })).toMatchObject({
      status: "completed",
      output: "You said: next",
    });
  });

  it("follows a paused run's continuation over SSE with streamContinue", async () => {
    const client = testClient({ fetch: cuttingFetch(2).fetch });
    const agent = await client.createAgent({
      ...mockAgent,
      tools: [{ type: "client", name: "ask", parameters: { type: "object", properties: {} } }],
    });
    const first = await collect(client.stream(agent.id, { input: "[[tool ask {}]]" }));
    expect(first.at(-1)?.type).toBe("run_paused");
    const started = first.find((event) => event.type === "tool_call_started");
    if (started?.type !== "tool_call_started") throw new Error("no tool_call_started event");
    const rest = await collect(
      client.streamContinue(agent.id, started.run_id, { tool_results: [{ tool_call_id: started.data.tool_call_id, output: "red" }] }),
    );
    expect(rest[0]?.type).toBe("run_continued");
    expect(rest.at(-1)?.type).toBe("run_completed");
    expect(rest[0]!.seq).toBeGreaterThan(first.at(-1)!.seq);
  });

  it("forks a finished run from a checkpoint", async () => {
    const client = testClient();
    const agent = await client.createAgent({ ...mockAgent, tools: [{ type: "builtin", name: "current_time" }] });
    const source = await client.run(agent.id, { input: "[[tool current_time {}]]" });
    expect(source.status).toBe("completed");
    const [afterTool] = await client.listCheckpoints(agent.id, source.id);
    expect(afterTool?.after).toBe("tool_result");
    const fork = await client.fork(agent.id, source.id, { checkpoint: afterTool!.id, input: "Again" });
    expect(fork).toMatchObject({
      status: "completed",
      parent_run_id: source.id,
      forked_from_checkpoint: afterTool!.id,
      session_id: source.session_id,
    });
    expect(fork.id).not.toBe(source.id);
  });

  it("re-attaches to a running background run with streamEvents", async () => {
    const client = testClient({ fetch: cuttingFetch(2).fetch });
    const agent = await client.createAgent(mockAgent);
    const sessionId = `attach-${crypto.randomUUID()}`;
    const sent = await holdRunQueue(sessionId);
    const started = await client.runInBackground(agent.id, { input: "[[words 8]]", session_id: sessionId });
    await deliverRunMessages(sent);
    const events = await collect(client.streamEvents(agent.id, started.run_id));
    const stored = await testClient().listEvents(agent.id, started.run_id);
    expect(events.map((event) => event.seq)).toEqual(stored.map((event) => event.seq));
    expect(events.at(-1)?.type).toBe("run_completed");
  });
});
