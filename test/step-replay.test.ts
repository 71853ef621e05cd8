import { describe, expect, it } from "vitest";
import { SseReader } from "./support/events";
import { api, createAgent } from "./support/http";
import { mediaKeys, TINY_PNG } from "./support/media";
import { gateTool, openGate } from "./support/tool-server";
import { postRun, readEvents, runTurn, transcriptOf, type Run } from "./support/runs";

type Checkpoint = {
  id: string;
  run_id: string;
  step: number;
  after: string;
  tool_call_id: string | null;
  tool_name: string | null;
  message_index: number;
};

const checkpointsOf = async (agentId: string, runId: string) =>
  (await (await api(`/v1/agents/${agentId}/runs/${runId}/checkpoints`)).json<{ data: Checkpoint[] }>()).data;
const continueRun = (agentId: string, runId: string, body: Record<string, unknown>) =>
  api(`/v1/agents/${agentId}/runs/${runId}/continue`, { body });
const transcriptAt = async (sessionId: string, runId: string) =>
  (
    await (
      await api(`/v1/sessions/${sessionId}/transcript?run_id=${runId}`)
    ).json<{ data: { index: number; role: string; run_id: string; content: Record<string, unknown>[] }[] }>()
  ).data;
/** An agent whose builtin `current_time` the offline model calls three times, one step each. */
const threeTools = () => createAgent({ tools: [{ type: "builtin", name: "current_time" }] });

async function threeStepRun() {
  const agent = await threeTools();
  const run = await runTurn(agent.id, { input: "[[tool current_time {}]] [[tool current_time {}]] [[tool current_time {}]] three" });
  expect(run.status).toBe("completed");
  return { agent, run };
}

describe("checkpoints", () => {
  it("records one after each tool step and one at the end, with checkpoint events", async () => {
    const agent = await threeTools();
    const events = await readEvents(
      await postRun(agent.id, { input: "[[tool current_time {}]] [[tool current_time {}]] [[tool current_time {}]] three", stream: true }),
    );
    const runId = events[0]!.run_id;
    const checkpoints = await checkpointsOf(agent.id, runId);
    expect(checkpoints.map((c) => [c.step, c.after, c.tool_name])).toEqual([
      [1, "tool_result", "current_time"],
      [2, "tool_result", "current_time"],
      [3, "tool_result", "current_time"],
      [4, "end", null],
    ]);
    expect(checkpoints.map((c) => c.message_index)).toEqual([2, 4, 6, 7]);
    expect(checkpoints[0]!.id).toMatch(/^ckpt_/);
    const fromEvents = events.filter((e) => e.type === "checkpoint").map((e) => e.data);
    expect(fromEvents).toEqual(checkpoints.map((c) => ({ checkpoint_id: c.id, step: c.step })));
    // The end checkpoint's event comes before the terminal event.
    expect(events.at(-1)?.type).toBe("run_completed");
  });

  it("answers 404 for a foreign or unknown run", async () => {
    const agent = await createAgent();
    expect((await api(`/v1/agents/${agent.id}/runs/run_nope/checkpoints`)).status).toBe(404);
  });
});

describe("continue_from and fork", () => {
  it("forks from the first of three tool checkpoints without changing the source", async () => {
    const { agent, run } = await threeStepRun();
    const before = JSON.stringify(await (await api(`/v1/agents/${agent.id}/runs/${run.id}`)).json());
    const sourceTranscript = JSON.stringify(await transcriptAt(run.session_id, run.id));
    const [first] = await checkpointsOf(agent.id, run.id);

    const response = await continueRun(agent.id, run.id, { continue_from: first!.id, input: "Now something else" });
    expect(response.status).toBe(200);
    const fork = await response.json<Run>();
    expect(fork).toMatchObject({
      status: "completed",
      parent_run_id: run.id,
      forked_from_checkpoint: first!.id,
      output: "You said: Now something else",
    });
    expect(fork.id).not.toBe(run.id);

    const forkTranscript = await transcriptAt(run.session_id, fork.id);
    expect(forkTranscript.map((m) => m.role)).toEqual(["user", "assistant", "tool", "user", "assistant"]);
    expect(forkTranscript.filter((m) => m.role === "tool")).toHaveLength(1);
    expect(forkTranscript.slice(0, 3).every((m) => m.run_id === run.id)).toBe(true);

    // The source run and its branch are byte for byte what they were.
    expect(JSON.stringify(await (await api(`/v1/agents/${agent.id}/runs/${run.id}`)).json())).toBe(before);
    expect(JSON.stringify(await transcriptAt(run.session_id, run.id))).toBe(sourceTranscript);
    // The fork is the head: the session's transcript and its next turn follow it.
    const session = await (await api(`/v1/sessions/${run.session_id}`)).json<{ head_run_id: string; run_count: number }>();
    expect(session).toMatchObject({ head_run_id: fork.id, run_count: 2 });
    expect((await transcriptOf(run.session_id)).map((m) => m.run_id)).toEqual(forkTranscript.map((m) => m.run_id));
  });

  it("forks a fork", async () => {
    const { agent, run } = await threeStepRun();
    const [first] = await checkpointsOf(agent.id, run.id);
    const fork = await (
      await continueRun(agent.id, run.id, { continue_from: first!.id, input: "[[tool current_time {}]] fork one" })
    ).json<Run>();
    expect(fork.status).toBe("completed");
    const [forkStep] = await checkpointsOf(agent.id, fork.id);
    expect(forkStep?.after).toBe("tool_result");
    const second = await (await continueRun(agent.id, fork.id, { continue_from: forkStep!.id, input: "fork two" })).json<Run>();
    expect(second).toMatchObject({ status: "completed", parent_run_id: fork.id, output: "You said: fork two" });
    const transcript = await transcriptAt(run.session_id, second.id);
    expect(transcript.map((m) => [m.role, m.run_id])).toEqual([
      ["user", run.id],
      ["assistant", run.id],
      ["tool", run.id],
      ["user", fork.id],
      ["assistant", fork.id],
      ["tool", fork.id],
      ["user", second.id],
      ["assistant", second.id],
    ]);
  });

  it("continues a completed run from its end with a new input, as a sibling", async () => {
    const agent = await createAgent();
    const run = await runTurn(agent.id, { input: "first" });
    const next = await (await continueRun(agent.id, run.id, { input: "second" })).json<Run>();
    const [end] = await checkpointsOf(agent.id, run.id);
    expect(next).toMatchObject({ status: "completed", parent_run_id: run.id, forked_from_checkpoint: end!.id, output: "You said: second" });
    expect((await transcriptAt(run.session_id, next.id)).map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    const noInput = await continueRun(agent.id, run.id, {});
    expect(noInput.status).toBe(400);
  });

  it("re-runs from before the last user message: a new input replaces it, none regenerates it", async () => {
    const agent = await createAgent();
    const sessionId = `last-user-${crypto.randomUUID()}`;
    await runTurn(agent.id, { input: "one", session_id: sessionId });
    const second = await runTurn(agent.id, { input: "two", session_id: sessionId });
    const replaced = await (await continueRun(agent.id, second.id, { continue_from: "last_user", input: "deux" })).json<Run>();
    expect(replaced).toMatchObject({
      status: "completed",
      parent_run_id: second.id,
      forked_from_checkpoint: null,
      output: "You said: deux",
    });
    expect((await transcriptAt(sessionId, replaced.id)).map((m) => m.content)).toEqual([
      [{ type: "text", text: "one" }],
      [{ type: "text", text: "You said: one" }],
      [{ type: "text", text: "deux" }],
      [{ type: "text", text: "You said: deux" }],
    ]);
    const regenerated = await (await continueRun(agent.id, second.id, { continue_from: "last_user" })).json<Run>();
    expect(regenerated).toMatchObject({ status: "completed", output: "You said: two", input: [{ type: "text", text: "two" }] });
  });

  it("continues a failed run from its end: the failed step runs again on a new run", async () => {
    const agent = await createAgent();
    const failed = await runTurn(agent.id, { input: "[[fail 500 x1]] retry me" });
    expect(failed.status).toBe("error");
    // The directive counts attempts per model call: the new run's attempt 1 fails too, and the one retry it now has succeeds.
    expect((await api(`/v1/agents/${agent.id}`, { method: "PATCH", body: { retries: 1, delay_between_retries: 0 } })).status).toBe(200);
    const again = await (await continueRun(agent.id, failed.id, {})).json<Run>();
    expect(again).toMatchObject({ status: "completed", parent_run_id: failed.id, output: "You said: retry me", attempts: 2 });
    expect(again.metrics.retries).toBe(1);
  });

  it("refuses a cancelled run in place (409) but forks it from a checkpoint", async () => {
    const agent = await createAgent({
      tools: [
        { type: "builtin", name: "current_time" },
        { type: "client", name: "ask", parameters: { type: "object", properties: {} } },
      ],
    });
    const paused = await runTurn(agent.id, { input: "[[tool current_time {}]] [[tool ask {}]] then ask" });
    expect(paused.status).toBe("paused");
    await api(`/v1/agents/${agent.id}/runs/${paused.id}/cancel`, { method: "POST" });
    const inPlace = await continueRun(agent.id, paused.id, { input: "again" });
    expect(inPlace.status).toBe(409);
    expect((await inPlace.json<{ error: { type: string } }>()).error.type).toBe("run_not_continuable");
    const [step] = await checkpointsOf(agent.id, paused.id);
    expect(step).toMatchObject({ after: "tool_result", tool_name: "current_time" });
    const fork = await (await continueRun(agent.id, paused.id, { continue_from: step!.id, fork: true, input: "instead" })).json<Run>();
    expect(fork).toMatchObject({ status: "completed", parent_run_id: paused.id, output: "You said: instead" });
  });

  it("holds a paused run's session: a fork is 409 until it is cancelled", async () => {
    const agent = await createAgent({ tools: [{ type: "client", name: "ask", parameters: { type: "object", properties: {} } }] });
    const paused = await runTurn(agent.id, { input: "[[tool ask {}]]" });
    const fork = await continueRun(agent.id, paused.id, { fork: true, input: "elsewhere" });
    expect(fork.status).toBe(409);
    expect((await fork.json<{ error: { type: string } }>()).error.type).toBe("session_busy");
  });

  it("answers 404 for an unknown checkpoint, and a branch takes the session's turn", async () => {
    const bucket = crypto.randomUUID();
    const agent = await createAgent({ tools: [gateTool(bucket)] });
    const run = await runTurn(agent.id, { input: "hi" });
    expect((await continueRun(agent.id, run.id, { continue_from: "ckpt_nope", input: "x" })).status).toBe(404);
    // The next turn stays in its tool step until the gate opens.
    const held = new SseReader(await postRun(agent.id, { input: "[[tool wait {}]] busy", session_id: run.session_id, stream: true }));
    await held.until("tool_call_started");
    const busy = await continueRun(agent.id, run.id, { input: "branch" });
    expect(busy.status).toBe(409);
    await openGate(bucket);
    expect((await held.rest()).at(-1)?.type).toBe("run_completed");
  });

  it("takes an image in a branch's input, stored like a turn's", async () => {
    const agent = await createAgent();
    const run = await runTurn(agent.id, { input: "base" });
    const response = await continueRun(agent.id, run.id, {
      input: [
        { type: "text", text: "look at this" },
        { type: "image", media_type: "image/png", data: TINY_PNG },
      ],
    });
    expect(response.status).toBe(200);
    const fork = await response.json<Run>();
    expect(fork).toMatchObject({ status: "completed", output: "You said: look at this" });
    expect(fork.input[1]).toMatchObject({ type: "image", media_type: "image/png", media_id: expect.stringMatching(/^med_/) });
    expect(await mediaKeys(`default/${run.session_id}/`)).toHaveLength(1);
  });

  it("streams and backgrounds a branch", async () => {
    const agent = await createAgent();
    const run = await runTurn(agent.id, { input: "base" });
    const events = await readEvents(await continueRun(agent.id, run.id, { input: "streamed branch", stream: true }));
    expect(events.map((e) => e.type).slice(0, 2)).toEqual(["run_started", "run_continued"]);
    expect(events.at(-1)).toMatchObject({ type: "run_completed", data: { output: "You said: streamed branch" } });
    const accepted = await continueRun(agent.id, events[0]!.run_id, { input: "background branch", background: true });
    expect(accepted.status).toBe(202);
    const { run_id } = await accepted.json<{ run_id: string }>();
    const done = await (await api(`/v1/agents/${agent.id}/runs/${run_id}?wait=20`)).json<Run>();
    expect(done).toMatchObject({ status: "completed", output: "You said: background branch", parent_run_id: events[0]!.run_id });
  });

  it("forks across providers: history with tool calls converts and the branch completes", async () => {
    const { agent, run } = await threeStepRun();
    const [, second] = await checkpointsOf(agent.id, run.id);
    for (const provider of ["openai", "openai-chat", "anthropic"]) {
      expect((await api(`/v1/agents/${agent.id}`, { method: "PATCH", body: { provider, base_url: "mock:" } })).status).toBe(200);
      const fork = await (await continueRun(agent.id, run.id, { continue_from: second!.id, input: `on ${provider}` })).json<Run>();
      expect(fork, provider).toMatchObject({ status: "completed", output: `You said: on ${provider}` });
      expect(fork.agent_version).toBeGreaterThan(run.agent_version);
    }
  });
});
