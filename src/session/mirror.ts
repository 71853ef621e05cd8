import type { RunRecord } from "./run-record";
import type { MirrorStatement, StoredMessage } from "./storage";

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

export const mirrorRun = (tenant: string, run: RunRecord, updatedAt: string): MirrorStatement => ({
  sql: `INSERT INTO runs (id, tenant, session_id, agent_id, agent_version, status, body, created_at, updated_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT(id) DO UPDATE SET status = excluded.status, body = excluded.body, updated_at = excluded.updated_at`,
  params: [run.id, tenant, run.session_id, run.agent_id, run.agent_version, run.status, JSON.stringify(run), run.created_at, updatedAt],
});

export const mirrorMessage = (tenant: string, sessionId: string, m: StoredMessage): MirrorStatement => ({
  sql: `INSERT OR IGNORE INTO messages (tenant, session_id, idx, run_id, role, content, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  params: [tenant, sessionId, m.index, m.run_id, m.role, JSON.stringify(m.content), m.created_at],
});

/** Removes a session's rows from the mirror. */
export const deleteSessionRows = (tenant: string, sessionId: string): MirrorStatement[] => [
  { sql: "DELETE FROM messages WHERE tenant = ? AND session_id = ?", params: [tenant, sessionId] },
  { sql: "DELETE FROM runs WHERE tenant = ? AND session_id = ?", params: [tenant, sessionId] },
  { sql: "DELETE FROM sessions WHERE tenant = ? AND id = ?", params: [tenant, sessionId] },
];
