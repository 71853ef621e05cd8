import type { Run } from "../../src/run-model/run-record";
import type { RunEvent } from "../../src/session/stream/events";
import { ADMIN_TOKEN, api } from "./http";

export type { Run, RunEvent };

/**
 * A directive for an input whose model call answers only long after any test has ended (the offline
 * model's `[[slow]]`, which a cancel aborts at once): the run stays in its model step, running and
 * holding its session, until the test cancels it or deletes its session.
 */
export const HOLD_MODEL = "[[slow 600000]]";

/** POSTs a turn and returns the raw response. */
export const postRun = (agentId: string, body: Record<string, unknown>, token: string = ADMIN_TOKEN) =>
  api(`/v1/agents/${agentId}/runs`, { body }, token);

/** Runs a blocking turn and returns the Run (fails the test on a non-200). */
export async function runTurn(agentId: string, body: Record<string, unknown>, token: string = ADMIN_TOKEN): Promise<Run> {
  const response = await postRun(agentId, body, token);
  if (response.status !== 200) throw new Error(`POST runs: ${response.status} ${await response.text()}`);
  return response.json<Run>();
}

/** Parses a whole SSE body into its frames' envelopes, checking that `id:` equals `seq`. */
export async function readEvents(response: Response): Promise<RunEvent[]> {
  const text = await response.text();
  const events: RunEvent[] = [];
  for (const frame of text.split("\n\n")) {
    if (!frame.trim() || frame.startsWith(":")) continue;
    const fields = new Map<string, string>();
    for (const line of frame.split("\n")) {
      const at = line.indexOf(": ");
      if (at > 0) fields.set(line.slice(0, at), line.slice(at + 2));
    }
    const event = JSON.parse(fields.get("data") ?? "null") as RunEvent;
    if (String(event.seq) !== fields.get("id") || event.type !== fields.get("event")) {
      throw new Error(`SSE frame id/event do not match its envelope: ${frame}`);
    }
    events.push(event);
  }
  return events;
}

export const transcriptOf = async (sessionId: string, token: string = ADMIN_TOKEN) => {
  const response = await api(`/v1/sessions/${sessionId}/transcript`, {}, token);
  if (response.status !== 200) throw new Error(`GET transcript: ${response.status} ${await response.text()}`);
  return (await response.json<{ data: { index: number; run_id: string; role: string; content: Record<string, unknown>[] }[] }>()).data;
};
