import { and, eq, max, sql } from "drizzle-orm";
import { database } from "../../db/client";
import { events, messages, runInputs, runs, sessions } from "../../db/schema";
import type { Block, Role } from "../../core/messages";
import type { SessionStore } from "./session-store";
import { openRunRow } from "../../run-model/compact-run-body";
import { parseRunRow } from "../../run-model/run-inputs";
import { unpackMessages } from "./message-packs";
import { mirrorRunInputs } from "./mirror-statements";
import { parseStored } from "../../core/json-depth";

/** A rebuilt object starts this far above the highest seq D1 knows of (the mirror may lag the lost object). */
export const SEQ_RESERVE = 1000;

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
  const d1 = database(db);
  const session = await d1
    .select({ agent_id: sessions.agentId, last_seq: sessions.lastSeq, created_at: sessions.createdAt, updated_at: sessions.updatedAt })
    .from(sessions)
    .where(and(eq(sessions.tenant, tenant), eq(sessions.id, sessionId)))
    .get();
  const [runRows, messageRows, lastEvent] = session
    ? await d1.batch([
        // Aliased: drizzle maps a D1 batch's rows by column name, and both columns are called `body`.
        d1
          .select({ body: runs.body, once: sql<string | null>`${runInputs.body}`.as("once") })
          .from(runs)
          .leftJoin(runInputs, eq(runInputs.id, runs.id))
          .where(and(eq(runs.tenant, tenant), eq(runs.sessionId, sessionId)))
          .orderBy(runs.createdAt, runs.id),
        d1
          .select({
            idx: messages.idx,
            run_id: messages.runId,
            role: messages.role,
            content: messages.content,
            created_at: messages.createdAt,
          })
          .from(messages)
          .where(and(eq(messages.tenant, tenant), eq(messages.sessionId, sessionId)))
          .orderBy(messages.idx),
        d1
          .select({ seq: max(events.seq) })
          .from(events)
          .where(and(eq(events.tenant, tenant), eq(events.sessionId, sessionId))),
      ])
    : [[], [], []];
  const transcript = await unpackMessages(messageRows);
  store.createSchema();
  store.setMeta("tenant", tenant);
  if (session) {
    store.setMeta("agent_id", session.agent_id);
    store.setMeta("created_at", session.created_at);
    store.setMeta("updated_at", session.updated_at);
    const storedSeq = lastEvent[0]?.seq ?? 0;
    const ceiling = Math.max(session.last_seq, storedSeq) + SEQ_RESERVE;
    store.setMeta("seq_ceiling", String(ceiling));
    // The old events stay in D1, read from there when asked for (event-log.ts); new ones start above.
    store.setMeta("events_floor", String(storedSeq));
    store.setMeta("events_mirrored", String(storedSeq));
    for (const row of runRows) {
      const run = parseRunRow(await openRunRow(row), "D1 rebuild");
      store.putRun(run);
      // Mirrored before the split (run-inputs.ts): D1 gets the write-once row before any later
      // save of the run replaces its body with the changing part alone.
      if (row.once === null) store.enqueueMirror([mirrorRunInputs(tenant, run)]);
      // Its opening events, if it had them, are in D1 below the floor: a resume does not repeat them.
      store.markOpened(run.id);
      if (run.status === "pending" || run.status === "running" || run.status === "paused") store.setMeta("active_run_id", run.id);
    }
    for (const row of transcript) {
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
  return { runs: runRows.length, messages: transcript.length };
}
