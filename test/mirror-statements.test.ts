import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { agentDefinitionSchema, type Agent } from "../src/agents";
import { newRunRecord, type RunRecord } from "../src/run-model/run-record";
import {
  deleteSessionRows,
  isQuarantineRecord,
  mirrorEvents,
  mirrorLastSeq,
  mirrorMessage,
  mirrorQuarantined,
  mirrorRun,
  mirrorRunInputs,
  mirrorSession,
  withoutSupersededRuns,
} from "../src/session/store/mirror-statements";
import type { EventRow, MirrorStatement } from "../src/session/store/session-store";
import { packEvents, unpackEvents } from "../src/session/store/event-packs";
import { MESSAGE_PACK_GZ, packMessages } from "../src/session/store/message-packs";
import { mirroredMessages, openedMirrorRow } from "./support/mirror";

const send = (statements: MirrorStatement[]) => env.DB.batch(statements.map((s) => env.DB.prepare(s.sql).bind(...s.params)));

const TABLES = ["sessions", "runs", "run_inputs", "messages", "events", "mirror_quarantine"] as const;

/** Every mirror row of the session, table by table. */
async function rowsOf(sessionId: string) {
  const rows: Record<string, unknown[]> = {};
  for (const table of TABLES) {
    const column = table === "sessions" ? "id" : "session_id";
    rows[table] = (await env.DB.prepare(`SELECT * FROM ${table} WHERE ${column} = ? ORDER BY 1, 2, 3`).bind(sessionId).all()).results;
  }
  return rows;
}

function ledger(tenant: string, sessionId: string, status: RunRecord["status"], lastSeq: number): MirrorStatement[] {
  const definition = agentDefinitionSchema.parse({ provider: "mock", model: "m" });
  const agent: Agent = { id: "agent", version: 1, created_at: "", updated_at: "", ...definition };
  const run = newRunRecord({
    id: `run-${sessionId}`,
    agent,
    session_id: sessionId,
    status,
    input: [],
    created_at: "2026-01-01T00:00:00.000Z",
  });
  const events = [1, 2, 3].map((seq) => ({ seq, run_id: run.id, type: "text_delta", data: `{"seq":${seq}}`, created_at: run.created_at }));
  return [
    mirrorSession(tenant, { id: sessionId, agent_id: "agent", created_at: run.created_at, updated_at: run.created_at, last_seq: lastSeq }),
    mirrorRun(tenant, run, run.created_at),
    mirrorRunInputs(tenant, run),
    mirrorMessage(tenant, sessionId, {
      index: 0,
      run_id: run.id,
      role: "user",
      content: [{ type: "text", text: "hi" }],
      created_at: run.created_at,
    }),
    ...mirrorEvents(tenant, sessionId, events),
    mirrorLastSeq(tenant, sessionId, lastSeq),
    mirrorQuarantined(tenant, sessionId, { id: 1, statements: 1, error: "rejected", at: run.created_at }),
  ];
}

describe("the mirror's statements (made with drizzle)", () => {
  it("change nothing when a batch is sent again, keep the highest last_seq, and delete every row of the session", async () => {
    const sessionId = `statements-${crypto.randomUUID()}`;
    await send(ledger("default", sessionId, "running", 10));
    const first = await rowsOf(sessionId);
    // The run's three events, in one pack (src/session/store/event-packs.ts).
    expect(first.events).toHaveLength(1);
    expect(unpackEvents(first.events as EventRow[]).map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(first.sessions).toMatchObject([{ last_seq: 10 }]);

    await send(ledger("default", sessionId, "running", 4));
    expect(await rowsOf(sessionId)).toEqual(first);

    await send(ledger("default", sessionId, "completed", 12));
    expect((await rowsOf(sessionId)).runs).toMatchObject([{ status: "completed" }]);
    expect((await rowsOf(sessionId)).sessions).toMatchObject([{ last_seq: 12 }]);

    await send(deleteSessionRows("default", sessionId));
    expect(Object.values(await rowsOf(sessionId)).flat()).toEqual([]);
  });

  it("read back each event once when a batch D1 took is sent again from an older mark, packed with later events", async () => {
    const sessionId = `packs-${crypto.randomUUID()}`;
    const event = (seq: number) => ({
      seq,
      run_id: "run_p",
      type: "content_delta",
      data: `{"text":"${seq}"}`,
      created_at: "2026-01-01T00:00:00.000Z",
    });
    await send(mirrorEvents("default", sessionId, [1, 2, 3].map(event)));
    await send(mirrorEvents("default", sessionId, [2, 3, 4, 5].map(event)));
    const rows = (await env.DB.prepare("SELECT * FROM events WHERE session_id = ?").bind(sessionId).all<EventRow>()).results;
    expect(rows).toHaveLength(2);
    expect(unpackEvents(rows).map((e) => [e.seq, JSON.parse(e.data)])).toEqual([1, 2, 3, 4, 5].map((seq) => [seq, { text: String(seq) }]));
  });

  it("keep a stretch of streamed pieces as one member of D1's packs, and give back every piece as it was, each once", async () => {
    const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms).toISOString();
    const piece = (seq: number, text: string, step = 1) => ({
      seq,
      run_id: "run_s",
      type: "content_delta",
      data: JSON.stringify({ text, step, attempt: 1 }),
      created_at: at(seq * 7),
    });
    const rows: EventRow[] = [
      { seq: 1, run_id: "run_s", type: "model_request_started", data: '{"step":1}', created_at: at(0) },
      piece(2, "Hel"),
      piece(3, 'lo "wo'),
      piece(4, "rld\n"),
      { seq: 5, run_id: "run_s", type: "tool_call_started", data: '{"tool_call_id":"t"}', created_at: at(40) },
      piece(6, "a", 2),
      piece(7, "b", 3),
      // Not written back byte for byte from { text, step, attempt }: kept as the event it is.
      { seq: 8, run_id: "run_s", type: "content_delta", data: '{"step":3,"text":"c","attempt":1}', created_at: at(60) },
      piece(9, "d", 3),
      piece(10, "e", 3),
    ];
    const [pack] = packEvents(rows, { stretches: true });
    expect(pack?.data.match(/"stretch"/g)).toHaveLength(2);
    expect(unpackEvents(packEvents(rows, { stretches: true }))).toEqual(rows);
    // A page sent again from an older mark with later pieces: each seq once, as it was.
    const more = [...rows, piece(11, "f", 3)];
    expect(
      unpackEvents([...packEvents(rows, { stretches: true }), ...packEvents(more, { stretches: true })].sort((a, b) => a.seq - b.seq)),
    ).toEqual(more);
  });

  it("pack a batch's messages into one row, read back every message once after a batch D1 took is sent again with later ones", async () => {
    const sessionId = `message-packs-${crypto.randomUUID()}`;
    const message = (index: number) =>
      mirrorMessage("default", sessionId, {
        index,
        run_id: index < 3 ? "run_a" : "run_b",
        role: index % 2 === 0 ? "user" : "assistant",
        content: [{ type: "text", text: `message ${index} ${'é"\\'.repeat(index)}` }],
        created_at: `2026-01-01T00:00:0${index}.000Z`,
      });
    const first = await packMessages([message(0), mirrorLastSeq("default", sessionId, 3), message(1), message(2)]);
    // The other statement keeps its place; the three messages are one row where the first one was.
    expect(first).toHaveLength(2);
    expect(first[1]).toEqual(mirrorLastSeq("default", sessionId, 3));
    await send(first);
    // A message alone stays a plain row; a batch sent again from an older outbox entry packs 1-4 under index 4.
    await send(await packMessages([message(5)]));
    await send(await packMessages([1, 2, 3, 4].map(message)));
    const rows = (await env.DB.prepare("SELECT idx, role FROM messages WHERE session_id = ? ORDER BY idx").bind(sessionId).all()).results;
    expect(rows).toEqual([
      { idx: 2, role: MESSAGE_PACK_GZ },
      { idx: 4, role: MESSAGE_PACK_GZ },
      { idx: 5, role: "assistant" },
    ]);
    // A scan for secrets reads packs opened (test/support/mirror.ts).
    const [packRow] = (await env.DB.prepare("SELECT * FROM messages WHERE session_id = ? ORDER BY idx").bind(sessionId).all()).results;
    expect(await openedMirrorRow(packRow as Record<string, unknown>)).toContain("message 1");
    const unpacked = await mirroredMessages(sessionId);
    const expected = [0, 1, 2, 3, 4, 5].map((index) => {
      const [tenant, session, idx, run_id, role, content, created_at] = message(index).params;
      return { tenant, session, idx, run_id, role, content, created_at };
    });
    expect(unpacked).toEqual(expected.map(({ idx, run_id, role, content, created_at }) => ({ idx, run_id, role, content, created_at })));
  });

  it("leave out of a batch the run upserts a later one of the same run supersedes, and D1 ends with the same rows", async () => {
    const sessionId = `superseded-${crypto.randomUUID()}`;
    const running = ledger("default", sessionId, "running", 3);
    const completed = ledger("default", sessionId, "completed", 4);
    const batch = [...running, ...completed];
    const kept = withoutSupersededRuns(batch);
    expect(batch.length - kept.length).toBe(1);
    expect(kept).not.toContain(running[1]);
    expect(kept).toContain(completed[1]);
    await send(kept);
    const short = await rowsOf(sessionId);
    const full = `superseded-${crypto.randomUUID()}`;
    await send([...ledger("default", full, "running", 3), ...ledger("default", full, "completed", 4)]);
    const strip = (rows: Record<string, unknown[]>) => JSON.stringify(rows).replaceAll(sessionId, "S").replaceAll(full, "S");
    expect(strip(short)).toEqual(strip(await rowsOf(full)));
    expect(short.runs).toMatchObject([{ status: "completed" }]);
  });

  it("recognise quarantine records, drizzle's and the hand-written ones older outboxes hold", () => {
    const record = mirrorQuarantined("default", "s", { id: 1, statements: 1, error: "x", at: "now" });
    expect(isQuarantineRecord(record)).toBe(true);
    expect(isQuarantineRecord({ sql: "INSERT OR IGNORE INTO mirror_quarantine (tenant) VALUES (?)", params: ["t"] })).toBe(true);
    expect(isQuarantineRecord(mirrorLastSeq("default", "s", 1))).toBe(false);
  });
});
