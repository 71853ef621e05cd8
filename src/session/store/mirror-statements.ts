import type { RunRecord } from "../../run-model/run-record";
import { splitRun } from "../../run-model/run-inputs";
import type { EventRow, MirrorStatement, StoredMessage } from "./session-store";

/**
 * Statements that copy the object's ledger to the D1 mirror. Every one is idempotent
 * (upserts, INSERT OR IGNORE), so a batch replayed after a failure changes nothing twice.
 */

export const mirrorSession = (
  tenant: string,
  s: { id: string; agent_id: string; created_at: string; updated_at: string; last_seq: number },
): MirrorStatement => ({
  sql: `INSERT INTO sessions (tenant, id, agent_id, last_seq, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
        ON CONFLICT(tenant, id) DO UPDATE SET last_seq = MAX(last_seq, excluded.last_seq), updated_at = excluded.updated_at`,
  params: [tenant, s.id, s.agent_id, s.last_seq, s.created_at, s.updated_at],
});

/** A run's changing body (run-inputs.ts); its write-once values go once, with `mirrorRunInputs`. */
export const mirrorRun = (tenant: string, run: RunRecord, updatedAt: string): MirrorStatement => ({
  sql: `INSERT INTO runs (id, tenant, session_id, agent_id, agent_version, status, body, created_at, updated_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT(id) DO UPDATE SET status = excluded.status, body = excluded.body, updated_at = excluded.updated_at`,
  params: [run.id, tenant, run.session_id, run.agent_id, run.agent_version, run.status, splitRun(run).changing, run.created_at, updatedAt],
});

/** A run's write-once values (agent snapshot, input, output schema), sent when the run is first stored. */
export const mirrorRunInputs = (tenant: string, run: RunRecord): MirrorStatement => ({
  sql: "INSERT OR IGNORE INTO run_inputs (id, tenant, session_id, body) VALUES (?, ?, ?, ?)",
  params: [run.id, tenant, run.session_id, splitRun(run).once],
});

export const mirrorMessage = (tenant: string, sessionId: string, m: StoredMessage): MirrorStatement => ({
  sql: `INSERT OR IGNORE INTO messages (tenant, session_id, idx, run_id, role, content, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  params: [tenant, sessionId, m.index, m.run_id, m.role, JSON.stringify(m.content), m.created_at],
});

/** JSON characters of event rows per statement (D1 and the outbox both allow 2 MB per value or row). */
const EVENT_CHUNK_CHARS = 256_000;

/**
 * Inserts events, as few statements as their size allows. The rows travel as one JSON
 * parameter that `json_each` unpacks: three bound parameters per statement whatever the row
 * count (D1 allows 100, which would cap a VALUES insert at 14 rows, and counts every
 * statement against an invocation's query limit — a step can emit thousands of deltas).
 */
export function mirrorEvents(tenant: string, sessionId: string, events: EventRow[]): MirrorStatement[] {
  const statements: MirrorStatement[] = [];
  let rows: string[] = [];
  let size = 0;
  const close = () => {
    if (rows.length === 0) return;
    statements.push({
      sql: `INSERT OR IGNORE INTO events (tenant, session_id, seq, run_id, type, data, created_at)
            SELECT ?, ?, json_extract(e.value, '$.seq'), json_extract(e.value, '$.run_id'), json_extract(e.value, '$.type'),
                   json_extract(e.value, '$.data'), json_extract(e.value, '$.created_at')
            FROM json_each(?) AS e`,
      params: [tenant, sessionId, `[${rows.join(",")}]`],
    });
    rows = [];
    size = 0;
  };
  for (const e of events) {
    // `data` is carried as the JSON text the object stores, so D1 stores exactly that text, never parsed on the way.
    const row = JSON.stringify({ seq: e.seq, run_id: e.run_id, type: e.type, data: e.data, created_at: e.created_at });
    if (size + row.length > EVENT_CHUNK_CHARS) close();
    rows.push(row);
    size += row.length + 1;
  }
  close();
  return statements;
}

/** Raises the session's highest handed-out seq, so that a rebuilt object starts above it. */
export const mirrorLastSeq = (tenant: string, sessionId: string, lastSeq: number): MirrorStatement => ({
  sql: "UPDATE sessions SET last_seq = MAX(last_seq, ?) WHERE tenant = ? AND id = ?",
  params: [lastSeq, tenant, sessionId],
});

/** Tells the operator that a statement was set aside (db/schema.ts, `mirror_quarantine`). */
export const mirrorQuarantined = (
  tenant: string,
  sessionId: string,
  q: { id: number; statements: number; error: string; at: string },
): MirrorStatement => ({
  sql: `${QUARANTINE_RECORD} (tenant, session_id, id, statements, error, at) VALUES (?, ?, ?, ?, ?, ?)`,
  params: [tenant, sessionId, q.id, q.statements, q.error.slice(0, 500), q.at],
});

const QUARANTINE_RECORD = "INSERT OR IGNORE INTO mirror_quarantine";

/** Whether a statement is a quarantine record (one that is itself rejected is not recorded again). */
export const isQuarantineRecord = (statement: MirrorStatement) => statement.sql.startsWith(QUARANTINE_RECORD);

/** Removes a session's rows from the mirror. */
export const deleteSessionRows = (tenant: string, sessionId: string): MirrorStatement[] => [
  { sql: "DELETE FROM events WHERE tenant = ? AND session_id = ?", params: [tenant, sessionId] },
  { sql: "DELETE FROM compactions WHERE tenant = ? AND session_id = ?", params: [tenant, sessionId] },
  { sql: "DELETE FROM messages WHERE tenant = ? AND session_id = ?", params: [tenant, sessionId] },
  { sql: "DELETE FROM run_inputs WHERE tenant = ? AND session_id = ?", params: [tenant, sessionId] },
  { sql: "DELETE FROM runs WHERE tenant = ? AND session_id = ?", params: [tenant, sessionId] },
  { sql: "DELETE FROM mirror_quarantine WHERE tenant = ? AND session_id = ?", params: [tenant, sessionId] },
  { sql: "DELETE FROM deleted_responses WHERE tenant = ? AND session_id = ?", params: [tenant, sessionId] },
  { sql: "DELETE FROM sessions WHERE tenant = ? AND id = ?", params: [tenant, sessionId] },
];
