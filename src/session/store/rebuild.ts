import type { Block, Role } from "../../core/messages";
import type { SessionStore } from "./session-store";
import { parseRunRow, type RunRow } from "../../run-model/run-inputs";
import { mirrorRunInputs } from "./mirror-statements";
import { parseStored } from "../../core/json-depth";

/** A rebuilt object starts this far above the highest seq D1 knows of (the mirror may lag the lost object). */
export const SEQ_RESERVE = 1000;

type SessionRow = { agent_id: string; last_seq: number; created_at: string; updated_at: string };
type MessageRow = { idx: number; run_id: string; role: string; content: string; created_at: string };

/**
 * Storage for a session the Worker has just drawn the id of (docs/api.md: a turn without
 * `session_id`): D1 cannot hold anything of it, so nothing is read.
 */
export function initializeNew(store: SessionStore, tenant: string, sessionId: string): void {
  store.createSchema();
  store.setMeta("tenant", tenant);
  // Written last, as by a rebuild: its presence marks the storage as initialised.
  store.setMeta("session_id", sessionId);
}

/**
 * Fills an object whose storage is empty (new, or wiped) from the D1 mirror: the session,
 * its runs, its transcript and the tool-result ledger. Runs inside `blockConcurrencyWhile`,
 * so nothing is served before it is done.
 */
export async function rebuildFromMirror(store: SessionStore, db: D1Database, tenant: string, sessionId: string) {
  const session = await db
    .prepare("SELECT agent_id, last_seq, created_at, updated_at FROM sessions WHERE tenant = ? AND id = ?")
    .bind(tenant, sessionId)
    .first<SessionRow>();
  const [runs, messages, lastEvent] = session
    ? await db.batch<RunRow | MessageRow | { seq: number | null }>([
        db
          .prepare(
            `SELECT r.body AS body, i.body AS once FROM runs r LEFT JOIN run_inputs i ON i.id = r.id
             WHERE r.tenant = ? AND r.session_id = ? ORDER BY r.created_at, r.id`,
          )
          .bind(tenant, sessionId),
        db
          .prepare("SELECT idx, run_id, role, content, created_at FROM messages WHERE tenant = ? AND session_id = ? ORDER BY idx")
          .bind(tenant, sessionId),
        db.prepare("SELECT MAX(seq) AS seq FROM events WHERE tenant = ? AND session_id = ?").bind(tenant, sessionId),
      ])
    : [null, null, null];
  store.createSchema();
  store.setMeta("tenant", tenant);
  if (session) {
    store.setMeta("agent_id", session.agent_id);
    store.setMeta("created_at", session.created_at);
    store.setMeta("updated_at", session.updated_at);
    const storedSeq = (lastEvent?.results[0] as { seq: number | null } | undefined)?.seq ?? 0;
    const ceiling = Math.max(session.last_seq, storedSeq) + SEQ_RESERVE;
    store.setMeta("seq_ceiling", String(ceiling));
    // The old events stay in D1, read from there when asked for (event-log.ts); new ones start above.
    store.setMeta("events_floor", String(storedSeq));
    store.setMeta("events_mirrored", String(storedSeq));
    for (const row of (runs?.results ?? []) as RunRow[]) {
      const run = parseRunRow(row, "D1 rebuild");
      store.putRun(run);
      // Mirrored before the split (run-inputs.ts): D1 gets the write-once row before any later
      // save of the run replaces its body with the changing part alone.
      if (row.once === null) store.enqueueMirror([mirrorRunInputs(tenant, run)]);
      // Its opening events, if it had them, are in D1 below the floor: a resume does not repeat them.
      store.markOpened(run.id);
      if (run.status === "pending" || run.status === "running" || run.status === "paused") store.setMeta("active_run_id", run.id);
    }
    for (const row of (messages?.results ?? []) as MessageRow[]) {
      const content = parseStored<Block[]>(row.content);
      store.appendMessage({ index: row.idx, run_id: row.run_id, role: row.role as Role, content, created_at: row.created_at });
      for (const block of content) {
        if (block.type === "tool_result") {
          store.recordToolResult({ tool_call_id: block.tool_call_id, run_id: row.run_id, output: block.output, is_error: block.is_error });
        }
      }
    }
  }
  // Written last: its presence is what marks the storage as initialised.
  store.setMeta("session_id", sessionId);
  return { runs: runs?.results.length ?? 0, messages: messages?.results.length ?? 0 };
}
