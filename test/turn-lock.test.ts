import { evictDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, createAgent } from "./support/http";
import { SseReader } from "./support/events";
import { postRun, runTurn, transcriptOf, type Run } from "./support/runs";
import { callsReceived, gateTool, openGate } from "./support/tool-server";

const stubOf = (sessionId: string) => env.SESSION.get(env.SESSION.idFromName(`default/${sessionId}`));

describe("the turn lock", () => {
  it("accepts exactly one of 20 concurrent turns, answers 409 to the rest, then takes the next turn", async () => {
    // Whichever turn wins stays in its tool step until the gate opens: the other 19 all arrive while it runs.
    const bucket = crypto.randomUUID();
    const agent = await createAgent({ tools: [gateTool(bucket)] });
    const sessionId = `lock-${crypto.randomUUID()}`;
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => postRun(agent.id, { input: `[[tool wait {}]] turn ${i}`, session_id: sessionId, stream: true })),
    );
    const accepted = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status === 409);
    expect(accepted).toHaveLength(1);
    expect(refused).toHaveLength(19);
    await openGate(bucket);
    const events = await new SseReader(accepted[0]!).rest();
    expect(events.at(-1)?.type).toBe("run_completed");
    const winner = await (await api(`/v1/agents/${agent.id}/runs/${events[0]!.run_id}`)).json<Run>();
    expect(winner.status).toBe("completed");
    for (const response of refused) {
      expect(response.headers.get("retry-after")).toBe("1");
      const body = await response.json<{ error: { type: string; details: Record<string, unknown> } }>();
      expect(body.error.type).toBe("session_busy");
      expect(body.error.details).toEqual({ session_id: sessionId, active_run_id: winner.id, active_status: "running" });
    }
    // Nothing of the refused turns was stored: one run, its four messages (input, tool call, tool result, answer).
    const runs = await (await api(`/v1/agents/${agent.id}/runs?session_id=${sessionId}`)).json<{ data: Run[] }>();
    expect(runs.data.map((r) => r.id)).toEqual([winner.id]);
    expect(await transcriptOf(sessionId)).toHaveLength(4);
    expect(await callsReceived(bucket)).toHaveLength(1);

    const next = await runTurn(agent.id, { input: "after", session_id: sessionId });
    expect(next.status).toBe("completed");
    expect(await transcriptOf(sessionId)).toHaveLength(6);
  });

  it("refuses a second turn on a busy session from the object alone, before the agent is read from D1", async () => {
    const agent = await createAgent({ tools: [{ type: "client", name: "ask_user", parameters: { type: "object", properties: {} } }] });
    const sessionId = `early-${crypto.randomUUID()}`;
    const paused = await runTurn(agent.id, { input: "[[tool ask_user {}]] hi", session_id: sessionId });
    expect(paused.status).toBe("paused");
    // The agent's D1 read would answer 404 now; the busy session answers first.
    expect((await api(`/v1/agents/${agent.id}`, { method: "DELETE" })).status).toBe(204);
    const busy = await postRun(agent.id, { input: "again", session_id: sessionId });
    expect(busy.status).toBe(409);
    expect((await busy.json<{ error: { details: Record<string, unknown> } }>()).error.details).toEqual({
      session_id: sessionId,
      active_run_id: paused.id,
      active_status: "paused",
    });
    // Another agent's turn on the session, and a turn on a new session, are not the object's to refuse early.
    const other = await createAgent();
    expect((await postRun(other.id, { input: "mine?", session_id: sessionId })).status).toBe(404);
    expect((await postRun(agent.id, { input: "new", session_id: `early-new-${crypto.randomUUID()}` })).status).toBe(404);
  });

  it("holds the session while a run is paused, across an eviction of the object", async () => {
    const agent = await createAgent({ tools: [{ type: "client", name: "ask_user", parameters: { type: "object", properties: {} } }] });
    const sessionId = `paused-${crypto.randomUUID()}`;
    const paused = await runTurn(agent.id, { input: "[[tool ask_user {}]] hi", session_id: sessionId });
    expect(paused.status).toBe("paused");
    await evictDurableObject(stubOf(sessionId));

    const busy = await postRun(agent.id, { input: "again", session_id: sessionId });
    expect(busy.status).toBe(409);
    const body = await busy.json<{ error: { details: Record<string, unknown> } }>();
    expect(body.error.details).toMatchObject({ active_run_id: paused.id, active_status: "paused" });
    const session = await (await api(`/v1/sessions/${sessionId}`)).json<{ active_run_id: string }>();
    expect(session.active_run_id).toBe(paused.id);
  });

  it("frees the session for the next turn as soon as a run has ended in error", async () => {
    const agent = await createAgent();
    const sessionId = `err-${crypto.randomUUID()}`;
    const failed = await runTurn(agent.id, { input: "[[fail 500 x1]]", session_id: sessionId });
    expect(failed.status).toBe("error");
    expect(failed.error).toMatchObject({ type: "provider_error", status: 500 });
    expect((await runTurn(agent.id, { input: "ok", session_id: sessionId })).status).toBe("completed");
  });
});
