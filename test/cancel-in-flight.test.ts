import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { RunLifecycle } from "../src/session/object/run-lifecycle";
import { SseReader, storedEvents, watchRun } from "./support/events";
import { api, createAgent } from "./support/http";
import { postRun, type Run } from "./support/runs";

const stubOf = (sessionId: string) => env.SESSION.get(env.SESSION.idFromName(`default/${sessionId}`));
const toolServer = (path: string) => fetch(`${env.TOOL_SERVER_URL}${path}`);

/** Waits until no loop drives the run in its object (the supervisor's "stopped" promise): whatever it did after the cancel is done. */
async function untilLoopStops(sessionId: string, runId: string): Promise<void> {
  await runInDurableObject(stubOf(sessionId), (instance) => (instance as unknown as { life: RunLifecycle }).life.stopped(runId));
}

const mirroredRun = async (runId: string) =>
  JSON.parse((await env.DB.prepare("SELECT body FROM runs WHERE id = ?").bind(runId).first<{ body: string }>())?.body ?? "null") as Run;

/** Agents whose one tool call is held by the receiver until its caller hangs up, or 5 s pass (before any timeout of the tool's own). */
const holdingTools = (bucket: string) => ({
  webhook: {
    tools: [
      {
        type: "webhook",
        name: "wait",
        description: "waits",
        parameters: { type: "object", properties: {} },
        url: `${env.TOOL_SERVER_URL}/hold/${bucket}?ms=5000`,
        timeout_ms: 60_000,
      },
    ],
    input: "[[tool wait {}]] hold on",
  },
  builtin: {
    tools: [{ type: "builtin", name: "http_get" }],
    metadata: { http_get_allow: [new URL(env.TOOL_SERVER_URL).hostname] },
    input: `[[tool http_get ${JSON.stringify({ url: `${env.TOOL_SERVER_URL}/hold/${bucket}?ms=5000` })}]] hold on`,
  },
});

describe("cancel while a tool call is in flight", () => {
  for (const kind of ["webhook", "builtin"] as const) {
    it(`aborts the ${kind} call and records or emits nothing for the run after run_cancelled`, async () => {
      const bucket = crypto.randomUUID();
      const { input, ...fields } = holdingTools(bucket)[kind];
      const agent = await createAgent(fields);
      const stream = new SseReader(await postRun(agent.id, { input, stream: true }));
      const [started] = await stream.take(1);
      const { run_id: runId, session_id: sessionId } = started!;
      // The call is at the receiver.
      await toolServer(`/held/${bucket}`);

      const cancelled = await api(`/v1/agents/${agent.id}/runs/${runId}/cancel`, { method: "POST" });
      expect(await cancelled.json<Run>()).toMatchObject({ status: "cancelled" });
      const { outcome } = await (await toolServer(`/ended/${bucket}`)).json<{ outcome: string }>();
      await untilLoopStops(sessionId, runId);

      // The receiver saw its caller go away: the run's abort signal reached the call.
      expect(outcome).toBe("aborted");
      const types = (await storedEvents(agent.id, runId)).map((e) => e.type);
      expect(types.at(-1)).toBe("run_cancelled");
      expect(types).not.toContain("tool_call_completed");
      expect(types).not.toContain("tool_call_error");
      expect((await stream.rest()).at(-1)?.type).toBe("run_cancelled");
      // The object and the D1 mirror agree on the finished run.
      const run = await (await api(`/v1/agents/${agent.id}/runs/${runId}`)).json<Run>();
      expect(run.metrics.tool_calls).toBe(0);
      expect((await mirroredRun(runId)).metrics).toEqual(run.metrics);
      // A watcher of the cancelled run gets its events and the stream closes.
      const watched = await new SseReader(await watchRun(agent.id, runId)).rest();
      expect(watched.map((e) => e.type)).toEqual(types);
    });
  }
});
