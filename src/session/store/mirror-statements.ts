import { and, eq, sql } from "drizzle-orm";
import type { RunRecord } from "../../run-model/run-record";
import type { WebhookEvent } from "../../webhooks/event-types";
import { compactRunBody, compactRunInputs } from "../../run-model/compact-run-body";
import { splitRun } from "../../run-model/run-inputs";
import {
  compactions,
  deletedResponses,
  events,
  messages,
  mirrorQuarantine,
  runInputs,
  runs,
  sessions,
  webhookDeliveries,
} from "../../db/schema";
import { excluded, template } from "../../db/statements";
import { packEvents } from "./event-packs";
import type { EventRow, MirrorStatement, StoredMessage } from "./session-store";

/**
 * Statements that copy the object's ledger to the D1 mirror, made from drizzle templates
 * (db/statements.ts). Every one is idempotent (upserts, insert-or-ignore), so a batch replayed
 * after a failure changes nothing twice.
 */

const upsertSession = template<"tenant" | "id" | "agentId" | "lastSeq" | "createdAt" | "updatedAt">((b, p) =>
  b
    .insert(sessions)
    .values({
      tenant: p("tenant"),
      id: p("id"),
      agentId: p("agentId"),
      lastSeq: p("lastSeq"),
      createdAt: p("createdAt"),
      updatedAt: p("updatedAt"),
    })
    .onConflictDoUpdate({
      target: [sessions.tenant, sessions.id],
      set: { lastSeq: sql`MAX(${sessions.lastSeq}, ${excluded(sessions.lastSeq)})`, updatedAt: excluded(sessions.updatedAt) },
    }),
);

export const mirrorSession = (
  tenant: string,
  s: { id: string; agent_id: string; created_at: string; updated_at: string; last_seq: number },
): MirrorStatement =>
  upsertSession({ tenant, id: s.id, agentId: s.agent_id, lastSeq: s.last_seq, createdAt: s.created_at, updatedAt: s.updated_at });

const upsertRun = template<"id" | "tenant" | "sessionId" | "agentId" | "agentVersion" | "status" | "body" | "createdAt" | "updatedAt">(
  (b, p) =>
    b
      .insert(runs)
      .values({
        id: p("id"),
        tenant: p("tenant"),
        sessionId: p("sessionId"),
        agentId: p("agentId"),
        agentVersion: p("agentVersion"),
        status: p("status"),
        body: p("body"),
        createdAt: p("createdAt"),
        updatedAt: p("updatedAt"),
      })
      .onConflictDoUpdate({
        target: runs.id,
        set: { status: excluded(runs.status), body: excluded(runs.body), updatedAt: excluded(runs.updatedAt) },
      }),
);

/** A run's changing body (run-inputs.ts); its write-once values go once, with `mirrorRunInputs`. */
export const mirrorRun = (tenant: string, run: RunRecord, updatedAt: string): MirrorStatement =>
  upsertRun({
    id: run.id,
    tenant,
    sessionId: run.session_id,
    agentId: run.agent_id,
    agentVersion: run.agent_version,
    status: run.status,
    body: splitRun(run).changing,
    createdAt: run.created_at,
    updatedAt,
  });

/** The run a statement upserts, when it is `mirrorRun`'s (the run's id is its first parameter). */
const runUpserted = (statement: MirrorStatement): string | null =>
  statement.sql === upsertRun.sql() && typeof statement.params[0] === "string" ? statement.params[0] : null;

/** Where `upsertRun` puts the run's body among its parameters (drizzle orders them by the table's columns). */
let bodyAt: number | undefined;
const BODY_MARK = "\u0000body";
const runBodyIndex = () =>
  (bodyAt ??= upsertRun({
    id: "",
    tenant: "",
    sessionId: "",
    agentId: "",
    agentVersion: 0,
    status: "",
    body: BODY_MARK,
    createdAt: "",
    updatedAt: "",
  }).params.indexOf(BODY_MARK));

/** Where `insertRunInputs` puts the write-once values among its parameters. */
let onceAt: number | undefined;
const runInputsIndex = () => (onceAt ??= insertRunInputs({ id: "", tenant: "", sessionId: "", body: BODY_MARK }).params.indexOf(BODY_MARK));

/**
 * A batch's statements with each run's rows as D1 keeps them (compact-run-body.ts): its body's
 * answer and checkpoints gzipped, its write-once values gzipped.
 */
export const withCompactRunBodies = (statements: MirrorStatement[]): Promise<MirrorStatement[]> =>
  Promise.all(
    statements.map(async (statement) => {
      const at = runUpserted(statement) !== null ? runBodyIndex() : statement.sql === insertRunInputs.sql() ? runInputsIndex() : -1;
      const value = statement.params[at];
      if (typeof value !== "string") return statement;
      const compact = at === runBodyIndex() ? await compactRunBody(value) : await compactRunInputs(value);
      if (compact === value) return statement;
      const params = [...statement.params];
      params[at] = compact;
      return { sql: statement.sql, params };
    }),
  );

/**
 * A batch's statements without the run upserts a later one in the same batch supersedes: each
 * writes the whole changing row, so the last alone leaves D1 with the same row, and every one
 * left out saves a row written for the row and each of its indexes.
 */
export function withoutSupersededRuns(statements: MirrorStatement[]): MirrorStatement[] {
  const last = new Map<string, number>();
  statements.forEach((statement, index) => {
    const id = runUpserted(statement);
    if (id !== null) last.set(id, index);
  });
  return statements.filter((statement, index) => {
    const id = runUpserted(statement);
    return id === null || last.get(id) === index;
  });
}

const insertRunInputs = template<"id" | "tenant" | "sessionId" | "body">((b, p) =>
  b
    .insert(runInputs)
    .values({ id: p("id"), tenant: p("tenant"), sessionId: p("sessionId"), body: p("body") })
    .onConflictDoNothing(),
);

/** A run's write-once values (agent snapshot, input, output schema), sent when the run is first stored. */
export const mirrorRunInputs = (tenant: string, run: RunRecord): MirrorStatement =>
  insertRunInputs({ id: run.id, tenant, sessionId: run.session_id, body: splitRun(run).once });

const insertMessage = template<"tenant" | "sessionId" | "idx" | "runId" | "role" | "content" | "createdAt">((b, p) =>
  b
    .insert(messages)
    .values({
      tenant: p("tenant"),
      sessionId: p("sessionId"),
      idx: p("idx"),
      runId: p("runId"),
      role: p("role"),
      content: p("content"),
      createdAt: p("createdAt"),
    })
    .onConflictDoNothing(),
);

export const mirrorMessage = (tenant: string, sessionId: string, m: StoredMessage): MirrorStatement =>
  insertMessage({
    tenant,
    sessionId,
    idx: m.index,
    runId: m.run_id,
    role: m.role,
    content: JSON.stringify(m.content),
    createdAt: m.created_at,
  });

/** A message insert's values, when the statement is `mirrorMessage`'s (its parameters follow the table's columns). */
export function messageInserted(
  statement: MirrorStatement,
): { tenant: string; sessionId: string; idx: number; runId: string; role: string; content: string; createdAt: string } | null {
  if (statement.sql !== insertMessage.sql()) return null;
  const [tenant, sessionId, idx, runId, role, content, createdAt] = statement.params;
  if (typeof tenant !== "string" || typeof sessionId !== "string" || typeof idx !== "number" || typeof runId !== "string") return null;
  if (typeof role !== "string" || typeof content !== "string" || typeof createdAt !== "string") return null;
  return { tenant, sessionId, idx, runId, role, content, createdAt };
}

/** A row of messages packed together (message-packs.ts): keyed by its last message, `content` the pack. */
export const mirrorMessagePack = (
  tenant: string,
  sessionId: string,
  last: { idx: number; runId: string; createdAt: string },
  role: string,
  pack: string,
): MirrorStatement =>
  insertMessage({ tenant, sessionId, idx: last.idx, runId: last.runId, role, content: pack, createdAt: last.createdAt });

/**
 * The rows travel as one JSON parameter that `json_each` unpacks: three bound parameters per
 * statement whatever the row count (D1 allows 100, which would cap a VALUES insert at 14 rows,
 * and counts every statement against an invocation's query limit — a step can emit thousands
 * of deltas). `WHERE true` is SQLite's: the SELECT of an INSERT … SELECT with an ON CONFLICT
 * clause needs a WHERE, or the parser takes ON CONFLICT for a join's ON.
 */
const eventField = (name: keyof EventRow) => sql.raw(`json_extract(e.value, '$.${name}')`);

const insertEvents = template<"tenant" | "sessionId" | "rows">((b, p) => {
  const fields = sql.join((["seq", "run_id", "type", "data", "created_at"] as const).map(eventField), sql`, `);
  return b
    .insert(events)
    .select(sql`SELECT ${p("tenant")}, ${p("sessionId")}, ${fields} FROM json_each(${p("rows")}) AS e WHERE true`)
    .onConflictDoNothing();
});

/** JSON characters of event rows per statement (D1 and the outbox both allow 2 MB per value or row). */
const EVENT_CHUNK_CHARS = 256_000;

/**
 * Inserts events, packed per run (event-packs.ts), as few statements as their size allows
 * (`insertEvents`: one JSON parameter of rows each).
 */
export function mirrorEvents(tenant: string, sessionId: string, rowsOf: EventRow[]): MirrorStatement[] {
  return mirrorPacks(tenant, sessionId, packEvents(rowsOf));
}

/** Inserts event rows as they are (packs already made, gzipped or not), as few statements as their size allows. */
export function mirrorPacks(tenant: string, sessionId: string, packs: EventRow[]): MirrorStatement[] {
  const statements: MirrorStatement[] = [];
  let rows: string[] = [];
  let size = 0;
  const close = () => {
    if (rows.length === 0) return;
    statements.push(insertEvents({ tenant, sessionId, rows: `[${rows.join(",")}]` }));
    rows = [];
    size = 0;
  };
  for (const e of packs) {
    // `data` is carried as the JSON text the object stores, so D1 stores exactly that text, never parsed on the way.
    const row = JSON.stringify({ seq: e.seq, run_id: e.run_id, type: e.type, data: e.data, created_at: e.created_at });
    if (size + row.length > EVENT_CHUNK_CHARS) close();
    rows.push(row);
    size += row.length + 1;
  }
  close();
  return statements;
}

/**
 * The webhook deliveries of one stored run event, made in D1 (docs/webhooks.md): one row per
 * webhook of the tenant that asks for one of `events` (a JSON array of `{ type, status }`) and
 * whose `agent_id` filter, if any, names the run's agent; none for a tenant without webhooks, so
 * a run pays one more statement in a batch it sends anyway, and no read. The key
 * `(webhook_id, event_key, event_type)` makes a replayed batch a no-op; `RETURNING` names the
 * rows it made, which the object then puts on the webhook queue (session-core.ts).
 */
/**
 * When the row is made, by D1's clock: its first attempt is due then (an event that waited out a
 * D1 outage in the outbox is not overdue for the Cron sweep the moment it lands).
 */
const MADE_AT = sql.raw("strftime('%Y-%m-%dT%H:%M:%fZ', 'now')");

const fanOutWebhookEvent = template<"tenant" | "agentId" | "eventKey" | "events" | "runId" | "sessionId" | "eventAt">((b, p) =>
  b
    .insert(webhookDeliveries)
    .select(
      sql`SELECT 'msg_' || lower(hex(randomblob(16))), w.tenant, w.id, ${p("eventKey")}, json_extract(t.value, '$.type'), ${p("runId")},
        ${p("sessionId")}, ${p("agentId")}, json_extract(t.value, '$.status'), ${p("eventAt")}, 0, 0, 'pending', NULL, ${MADE_AT}, ${MADE_AT}
        FROM webhooks AS w, json_each(${p("events")}) AS t
        WHERE w.tenant = ${p("tenant")} AND (w.agent_id IS NULL OR w.agent_id = ${p("agentId")})
          AND EXISTS (SELECT 1 FROM json_each(w.events) AS e WHERE e.value = json_extract(t.value, '$.type'))`,
    )
    .onConflictDoNothing()
    .returning({ id: webhookDeliveries.id }),
);

/** The deliveries of the run event `seq` of `run` to the tenant's webhooks that ask for `events`. */
export const mirrorWebhookEvent = (
  tenant: string,
  run: Pick<RunRecord, "id" | "session_id" | "agent_id">,
  event: { seq: number; created_at: string },
  made: WebhookEvent[],
): MirrorStatement =>
  fanOutWebhookEvent({
    tenant,
    agentId: run.agent_id,
    eventKey: `${run.id}:${event.seq}`,
    events: JSON.stringify(made),
    runId: run.id,
    sessionId: run.session_id,
    eventAt: event.created_at,
  });

/** Whether a statement is a webhook fan-out, whose returned rows are deliveries to send. */
export const isWebhookFanOut = (statement: MirrorStatement) => statement.sql === fanOutWebhookEvent.sql();

const raiseLastSeq = template<"lastSeq" | "tenant" | "id">((b, p) =>
  b
    .update(sessions)
    .set({ lastSeq: sql`MAX(${sessions.lastSeq}, ${p("lastSeq")})` })
    .where(and(eq(sessions.tenant, p("tenant")), eq(sessions.id, p("id")))),
);

/** Raises the session's highest handed-out seq, so that a rebuilt object starts above it. */
export const mirrorLastSeq = (tenant: string, sessionId: string, lastSeq: number): MirrorStatement =>
  raiseLastSeq({ lastSeq, tenant, id: sessionId });

const insertQuarantineRecord = template<"tenant" | "sessionId" | "id" | "statements" | "error" | "at">((b, p) =>
  b
    .insert(mirrorQuarantine)
    .values({
      tenant: p("tenant"),
      sessionId: p("sessionId"),
      id: p("id"),
      statements: p("statements"),
      error: p("error"),
      at: p("at"),
    })
    .onConflictDoNothing(),
);

/** Tells the operator that a statement was set aside (db/schema.ts, `mirror_quarantine`). */
export const mirrorQuarantined = (
  tenant: string,
  sessionId: string,
  q: { id: number; statements: number; error: string; at: string },
): MirrorStatement =>
  insertQuarantineRecord({ tenant, sessionId, id: q.id, statements: q.statements, error: q.error.slice(0, 500), at: q.at });

/** How quarantine records began before they were made with drizzle: outbox rows may still hold them. */
const HAND_WRITTEN_QUARANTINE_RECORD = "INSERT OR IGNORE INTO mirror_quarantine";

/** Whether a statement is a quarantine record (one that is itself rejected is not recorded again). */
export const isQuarantineRecord = (statement: MirrorStatement) =>
  statement.sql === insertQuarantineRecord.sql() || statement.sql.startsWith(HAND_WRITTEN_QUARANTINE_RECORD);

/** A session's rows in one of the mirror's tables. */
const deleteRowsOf = (
  table:
    | typeof events
    | typeof compactions
    | typeof messages
    | typeof runInputs
    | typeof runs
    | typeof mirrorQuarantine
    | typeof deletedResponses,
) =>
  template<"tenant" | "sessionId">((b, p) =>
    b.delete(table).where(and(eq(table.tenant, p("tenant")), eq(table.sessionId, p("sessionId")))),
  );

const deletions = [events, compactions, messages, runInputs, runs, mirrorQuarantine, deletedResponses].map(deleteRowsOf);

const deleteSession = template<"tenant" | "id">((b, p) =>
  b.delete(sessions).where(and(eq(sessions.tenant, p("tenant")), eq(sessions.id, p("id")))),
);

/** Removes a session's rows from the mirror (its sessions row last). */
export const deleteSessionRows = (tenant: string, sessionId: string): MirrorStatement[] => [
  ...deletions.map((deleteRows) => deleteRows({ tenant, sessionId })),
  deleteSession({ tenant, id: sessionId }),
];
