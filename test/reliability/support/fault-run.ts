import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { api, createAgent } from "../../support/http";
import { sessionStub } from "../../support/held-d1";
import { mirroredMessages, openedMirrorRow } from "../../support/mirror";
import { runTurn, transcriptOf, type Run, type RunEvent } from "../../support/runs";
import { callsReceived } from "../../support/tool-server";
import { secretsIn } from "./secrets";

export const PROVIDERS = ["anthropic", "openai", "openai-chat"] as const;
export type Provider = (typeof PROVIDERS)[number];

/** The input of every faulted run: two webhook steps (`first` answers at once, `second` waits at the gate), then the answer. */
export const TWO_TOOLS = "[[tool first {}]] [[tool second {}]] go";
export const TWO_TOOLS_OUTPUT = 'You said: go\nfirst returned: {"echo":{}}\nsecond returned: gate opened';
const ROLES = ["user", "assistant", "tool", "assistant", "tool", "assistant"];

/** The offline model served over loopback HTTP, where the real SDK of `provider` connects. */
export const loopbackOf = (provider: Provider) => (provider === "anthropic" ? env.MOCK_MODEL_URL : `${env.MOCK_MODEL_URL}/v1`);

/**
 * An agent on `provider` (the offline model in process for even `round`s, over loopback HTTP for odd ones,
 * where the real SDK connects) with the two webhook tools on `bucket` of the test tool server.
 */
export async function faultAgent(provider: Provider, bucket: string, round = 0) {
  const webhook = (name: string, action: string) => ({
    type: "webhook",
    name,
    parameters: { type: "object", properties: {} },
    url: `${env.TOOL_SERVER_URL}/${action}/${bucket}`,
  });
  return createAgent({
    provider,
    model: "mock-1",
    base_url: round % 2 === 0 ? "mock:" : loopbackOf(provider),
    retries: 3,
    delay_between_retries: 0.01,
    tools: [webhook("first", "echo"), webhook("second", "gate")],
  });
}

/** Waits (deadline 20 s) until `read` returns a value `done` accepts; returns the last value read. */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  let value = await read();
  while (!done(value) && Date.now() < deadline) {
    await scheduler.wait(50);
    value = await read();
  }
  return value;
}

type Calls = { body: { name: string }; idempotency_key: string | null }[];

/**
 * The invariants after a fault, for a run that should end `status`: the run's terminal state; the
 * transcript (API, object SQLite and D1) holds each row exactly once with indexes 0..n-1; a receiver
 * deduplicating on Idempotency-Key counts each tool call once (a re-send carries the same key); the
 * run's events have seq without duplicates or gaps and end with the terminal event; and the session
 * takes the next turn. Returns the raw tool calls (re-sends included) for the caller's own checks.
 */
export async function expectIntact(
  agentId: string,
  runId: string,
  sessionId: string,
  bucket: string,
  status: "completed" | "cancelled" = "completed",
): Promise<Calls> {
  const run = await eventually(
    async () => (await api(`/v1/agents/${agentId}/runs/${runId}?wait=20`)).json<Run>(),
    (r) => !["pending", "running"].includes(r.status),
  );
  expect(run.status, runId).toBe(status);
  if (status === "completed") expect(run.output).toBe(TWO_TOOLS_OUTPUT);
  const transcript = await transcriptOf(sessionId);
  if (status === "completed") expect(transcript.map((m) => m.role)).toEqual(ROLES);
  expect(transcript.map((m) => m.index)).toEqual(transcript.map((_, i) => i));
  const local = await runInDurableObject(sessionStub(sessionId), (_i, state) =>
    state.storage.sql.exec<{ idx: number; role: string }>("SELECT idx, role FROM messages ORDER BY idx").toArray(),
  );
  expect(local.map((m) => [m.idx, m.role])).toEqual(transcript.map((m) => [m.index, m.role]));
  // The D1 mirror catches up through the object's outbox: wait for it, then compare row by row.
  const mirrored = await eventually(
    () => mirroredMessages(sessionId),
    (rows) => rows.length >= local.length,
  );
  expect(mirrored.map((m) => [m.idx, m.role])).toEqual(local.map((m) => [m.idx, m.role]));
  const calls = await callsReceived<Calls[number]>(bucket);
  // A deduplicating receiver: one entry per tool name and Idempotency-Key; a re-send must carry the first key.
  const keysByTool = new Map<string, Set<string | null>>();
  for (const call of calls) keysByTool.set(call.body.name, (keysByTool.get(call.body.name) ?? new Set()).add(call.idempotency_key));
  for (const [name, keys] of keysByTool) expect([...keys], name).toEqual([expect.any(String)]);
  if (status === "completed") expect([...keysByTool.keys()].sort()).toEqual(["first", "second"]);
  const events = (await (await api(`/v1/agents/${agentId}/runs/${runId}/events`)).json<{ data: RunEvent[] }>()).data;
  const seqs = events.map((e) => e.seq);
  expect(seqs).toEqual(seqs.map((_, i) => seqs[0]! + i));
  expect(events.at(-1)?.type).toBe(status === "completed" ? "run_completed" : "run_cancelled");
  const next = await runTurn(agentId, { input: "next turn", session_id: sessionId });
  expect(next.status).toBe("completed");
  await expectNoStoredSecrets(sessionId);
  return calls;
}

/** What `expectNoStoredSecrets` scanned so far in this test file: the faults test reports it as counts. */
export const storedScan = { object_rows_scanned: 0, d1_event_rows_scanned: 0 };

/** No operator secret in any row of the session's object SQLite (every table) nor in its D1 events. */
export async function expectNoStoredSecrets(sessionId: string): Promise<void> {
  const rows = await runInDurableObject(sessionStub(sessionId), (_i, state) => {
    const tables = state.storage.sql
      .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'")
      .toArray();
    return tables.flatMap((t) =>
      state.storage.sql
        .exec(`SELECT * FROM "${t.name}"`)
        .toArray()
        .map((row) => JSON.stringify(row)),
    );
  });
  // D1's rows of the session with what the mirror gzipped opened (test/support/mirror.ts).
  const mirrored = await Promise.all(
    ["events", "messages", "runs", "run_inputs"].map(
      async (table) => (await env.DB.prepare(`SELECT * FROM ${table} WHERE session_id = ?`).bind(sessionId).all()).results,
    ),
  );
  const events = await Promise.all(mirrored.flat().map(openedMirrorRow));
  expect(secretsIn([...rows, ...events].join("\n"))).toEqual([]);
  storedScan.object_rows_scanned += rows.length;
  storedScan.d1_event_rows_scanned += events.length;
}
