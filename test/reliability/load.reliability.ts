import { describe, expect, it } from "vitest";
import { SseReader } from "../support/events";
import { api, createAgent, createTenantToken } from "../support/http";
import { postRun, transcriptOf, type Run } from "../support/runs";
import { callsReceived, gateTool, openGate } from "../support/tool-server";
import { count } from "./support/counts";

const BLASTS = 50;
const TURNS_PER_BLAST = 100;

describe("load", () => {
  it(`accepts exactly one of ${TURNS_PER_BLAST} concurrent turns on a fresh session, ${BLASTS} times, and stores only the winner`, async (context) => {
    const token = await createTenantToken();
    for (let blast = 0; blast < BLASTS; blast++) {
      // The winner waits at the gate in its tool step, so every other turn arrives while it holds the session.
      const bucket = crypto.randomUUID();
      const agent = await createAgent({ tools: [gateTool(bucket)] }, token);
      const sessionId = `blast-${crypto.randomUUID()}`;
      const responses = await Promise.all(
        Array.from({ length: TURNS_PER_BLAST }, (_, i) => postRun(agent.id, { input: `[[tool wait {}]] turn ${i}`, session_id: sessionId, stream: true }, token)),
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
});
