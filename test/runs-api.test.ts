import { describe, expect, it } from "vitest";
import { api, createAgent } from "./support/http";
import { postRun, readEvents, runTurn, transcriptOf } from "./support/runs";

describe("POST /v1/agents/{agent_id}/runs", () => {
  it("runs a blocking turn on the offline model and answers the Run", async () => {
    const agent = await createAgent();
    const run = await runTurn(agent.id, { input: "hello there" });
    expect(run).toMatchObject({
      agent_id: agent.id,
      status: "completed",
      output: "You said: hello there",
      error: null,
      agent_version: 1,
      attempts: 1,
      input: [{ type: "text", text: "hello there" }],
    });
    expect(run.id).toMatch(/^run_/);
    expect(run.session_id).toMatch(/^ses_/);
    expect(run.metrics.model_calls).toBe(1);
    expect(run.metrics.input_tokens).toBeGreaterThan(0);
    expect(run.metrics.output_tokens).toBe(Math.ceil("You said: hello there".length / 4));
    expect(run.metrics.total_tokens).toBe(run.metrics.input_tokens + run.metrics.output_tokens);
    expect(run.finished_at).not.toBeNull();

    const fetched = await api(`/v1/agents/${agent.id}/runs/${run.id}`);
    expect(fetched.status).toBe(200);
    expect(await fetched.json()).toEqual(run);
  });

  it("streams the run's events as SSE", async () => {
    const agent = await createAgent();
    const response = await postRun(agent.id, { input: "one two three", stream: true });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const events = await readEvents(response);
    const types = events.map((e) => e.type);
    expect(types[0]).toBe("run_started");
    expect(types).toContain("model_request_started");
    expect(types).toContain("model_request_completed");
    expect(types[types.length - 1]).toBe("run_completed");
    const text = events
      .filter((e) => e.type === "content_delta")
      .map((e) => e.data.text)
      .join("");
    expect(text).toBe("You said: one two three");
    const seqs = events.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    const runId = events[0]?.run_id;
    expect(events.every((e) => e.run_id === runId)).toBe(true);
    expect(events.at(-1)?.data.output).toBe("You said: one two three");
  });

  it("creates the session a client names and continues it on the next turn", async () => {
    const agent = await createAgent();
    const sessionId = `s-${crypto.randomUUID()}`;
    const first = await runTurn(agent.id, { input: "first", session_id: sessionId });
    const second = await runTurn(agent.id, { input: "second", session_id: sessionId });
    expect(first.session_id).toBe(sessionId);
    expect(second.session_id).toBe(sessionId);
    const transcript = await transcriptOf(sessionId);
    expect(transcript.map((m) => [m.index, m.role])).toEqual([
      [0, "user"],
      [1, "assistant"],
      [2, "user"],
      [3, "assistant"],
    ]);
    expect(transcript[3]?.content).toEqual([{ type: "text", text: "You said: second" }]);
    expect(transcript[0]?.run_id).toBe(first.id);
    expect(transcript[2]?.run_id).toBe(second.id);
  });

  it("lists runs newest first with a cursor", async () => {
    const agent = await createAgent();
    const ids = [];
    for (const input of ["a", "b", "c"]) ids.push((await runTurn(agent.id, { input })).id);
    const first = await (await api(`/v1/agents/${agent.id}/runs?limit=2`)).json<{ data: { id: string }[]; next_cursor: string }>();
    expect(first.data.map((r) => r.id)).toEqual([ids[2], ids[1]]);
    expect(first.next_cursor).toBeTruthy();
    const second = await (await api(`/v1/agents/${agent.id}/runs?limit=2&cursor=${first.next_cursor}`)).json<{
      data: { id: string }[];
      next_cursor: string | null;
    }>();
    expect(second.data.map((r) => r.id)).toEqual([ids[0]]);
    expect(second.next_cursor).toBeNull();
  });
});
