import { describe, expect, it } from "vitest";
import { SseReader } from "../support/events";
import { env } from "cloudflare:workers";
import { api, createAgent, createTenantToken } from "../support/http";
import { postRun, transcriptOf, type Run } from "../support/runs";
import { callsReceived, gateTool, openGate } from "../support/tool-server";
import { count } from "./support/counts";
import { eventually } from "./support/fault-run";
import { mirroredMessages } from "../support/mirror";

const BLASTS = 50;
const TURNS_PER_BLAST = 100;
const CONCURRENT_SESSIONS = 200;

/** A webhook tool that answers at once with its arguments, recorded under `bucket`. */
const echoTool = (bucket: string, name: string) => ({
  type: "webhook",
  name,
  parameters: { type: "object", properties: {} },
  url: `${env.TOOL_SERVER_URL}/echo/${bucket}`,
});

describe("load", () => {
  it(`accepts exactly one of ${TURNS_PER_BLAST} concurrent turns on a fresh session, ${BLASTS} times, and stores only the winner`, async (context) => {
    const token = await createTenantToken();
    for (let blast = 0; blast < BLASTS; blast++) {
      // The winner waits at the gate in its tool step, so every other turn arrives while it holds the session.
      const bucket = crypto.randomUUID();
      const agent = await createAgent({ tools: [gateTool(bucket)] }, token);
      const sessionId = `blast-${crypto.randomUUID()}`;
      const responses = await Promise.all(
        Array.from({ length: TURNS_PER_BLAST }, (_, i) =>
          postRun(agent.id, { input: `[[tool wait {}]] turn ${i}`, session_id: sessionId, stream: true }, token),
        ),
      );
      const accepted = responses.filter((r) => r.status === 200);
      const refused = responses.filter((r) => r.status === 409);
      expect(accepted, `blast ${blast}`).toHaveLength(1);
      expect(refused, `blast ${blast}`).toHaveLength(TURNS_PER_BLAST - 1);
      await Promise.all(refused.map((r) => r.body?.cancel()));
      await openGate(bucket);
      const events = await new SseReader(accepted[0]!).rest();
      expect(events.at(-1)?.type).toBe("run_completed");
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      const runs = await (await api(`/v1/agents/${agent.id}/runs?session_id=${sessionId}`, {}, token)).json<{ data: Run[] }>();
      expect(runs.data.map((r) => [r.id, r.status])).toEqual([[events[0]!.run_id, "completed"]]);
      expect(await transcriptOf(sessionId, token)).toHaveLength(4);
      expect(await callsReceived(bucket)).toHaveLength(1);
      count(context, "load", "blasts");
      count(context, "load", "concurrent_turns_sent", TURNS_PER_BLAST);
      count(context, "load", "turns_accepted", accepted.length);
    }
  });

  it(`runs ${CONCURRENT_SESSIONS} concurrent sessions through a three-step tool loop with 0 errors and 0 lost`, async (context) => {
    const token = await createTenantToken();
    const agent = await createAgent({ tools: [echoTool("load-first", "first"), echoTool("load-second", "second")] }, token);
    const prefix = `loop-${crypto.randomUUID()}-`;
    const sessions = Array.from({ length: CONCURRENT_SESSIONS }, (_, i) => ({
      id: `${prefix}${i}`,
      input: `[[tool first {"n":${i}}]] [[tool second {"n":${i}}]] loop ${i}`,
    }));
    const responses = await Promise.all(sessions.map((s) => postRun(agent.id, { input: s.input, session_id: s.id }, token)));
    const runs = await Promise.all(responses.map((r) => r.json<Run>()));
    expect(responses.map((r) => r.status)).toEqual(sessions.map(() => 200));
    expect(runs.map((r) => r.status)).toEqual(sessions.map(() => "completed"));
    expect(runs.map((r) => r.output)).toEqual(
      sessions.map((_, i) => `You said: loop ${i}\nfirst returned: {"echo":{"n":${i}}}\nsecond returned: {"echo":{"n":${i}}}`),
    );
    const transcripts = await Promise.all(sessions.map((s) => transcriptOf(s.id, token)));
    expect(transcripts.map((t) => t.length)).toEqual(sessions.map(() => 6));
    // Every session's messages reached the D1 mirror too (6 each, indexes 0-5: each once).
    const mirrored = await eventually(
      () => Promise.all(sessions.map((s) => mirroredMessages(s.id))),
      (all) => all.every((rows) => rows.length >= 6),
    );
    expect(mirrored.map((rows) => rows.map((m) => m.idx))).toEqual(sessions.map(() => [0, 1, 2, 3, 4, 5]));
    count(context, "load", "concurrent_tool_loop_sessions", CONCURRENT_SESSIONS);
    count(context, "load", "tool_loop_errors", responses.filter((r) => r.status !== 200).length);
    count(context, "load", "tool_loop_runs_lost", runs.filter((r) => r.status !== "completed").length);
  });
});
