import type { Block, Role } from "../../core/messages";
import type { RunEvent, RunEventType } from "../stream/events";
import { ACTIVE_STATUSES, type RunBase, type RunRecord, type RunStatus } from "../../run-model/run-record";
import { joinRunRow, parseRunRow, splitRun, type RunRow } from "../../run-model/run-inputs";
import { parseRunRecord } from "../../run-model/run-record-schema";
import type { StoredMessage } from "../../run-model/stored-message";
import { RunTextCache } from "./run-text-cache";
import { parseStored } from "../../core/json-depth";
import { type EventRow, packEvents, unpackEvents } from "./event-packs";
import { MessageCache } from "./message-cache";
import type { Statement } from "../../db/statements";

export type { StoredMessage };

/** One statement for the D1 mirror (made by drizzle, db/statements.ts), kept in the outbox until D1 has it. */
export type MirrorStatement = Statement;

/** Statements of one outbox entry at most, and their JSON characters (a statement over it is an entry alone). */
export const OUTBOX_ENTRY_STATEMENTS = 20;
export const OUTBOX_ENTRY_CHARS = 256_000;

export type LedgerEntry = { tool_call_id: string; run_id: string; output: string; is_error: boolean };

/**
 * The event log (event-log.ts); also created on first use by objects older than it. It has no
 * index by run: an index entry is a row written per event, and a run's events are read from its
 * first seq on (`run_logs`) along the primary key. Older objects drop theirs on first use.
 */
const EVENTS_SCHEMA = `
CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY, run_id TEXT NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL, created_at TEXT NOT NULL);
`;

/**
 * The mirror's own bookkeeping (mirror.ts), also created on first use by older objects:
 * outbox entries D1 rejected for good, the runs whose log has opened (`run_started` stored), and
 * the seq of each run's first stored event (`run_logs`; a run older than it has none).
 */
const MIRROR_SCHEMA = `
CREATE TABLE IF NOT EXISTS quarantine (id INTEGER PRIMARY KEY AUTOINCREMENT, statements TEXT NOT NULL, error TEXT NOT NULL, at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS opened_runs (run_id TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS run_logs (run_id TEXT PRIMARY KEY, first_seq INTEGER NOT NULL);
`;

/**
 * The tool-result ledger, keyed by run and call: a provider may reuse a tool_call_id, and a call
 * of one run must never find another run's result. Objects older than it kept a ledger keyed by
 * tool_call_id alone (`tool_results`): its rows move here on first use.
 */
const LEDGER_SCHEMA = `
CREATE TABLE IF NOT EXISTS tool_ledger (run_id TEXT NOT NULL, tool_call_id TEXT NOT NULL, output TEXT NOT NULL, is_error INTEGER NOT NULL, PRIMARY KEY (run_id, tool_call_id));
`;

/**
 * MCP (docs/mcp.md): the tools each run listed when it started (a resumed or retried run offers the
 * same list), and the calls sent to a server (`tool_sends`, written before the request leaves): a
 * sent call with no result in the ledger after a crash has an unknown outcome and is not sent again.
 */
const MCP_SCHEMA = `
CREATE TABLE IF NOT EXISTS run_mcp_tools (run_id TEXT PRIMARY KEY, tools TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tool_sends (run_id TEXT NOT NULL, tool_call_id TEXT NOT NULL, PRIMARY KEY (run_id, tool_call_id));
`;

/**
 * A run's write-once values (agent snapshot, input, output schema), written once when the run
 * is first stored, so that a step's commit re-serialises only the small changing body.
 * Runs stored before this table keep them inside their body (read as they are).
 */
const RUN_INPUTS_SCHEMA = `CREATE TABLE IF NOT EXISTS run_inputs (id TEXT PRIMARY KEY, body TEXT NOT NULL);`;

/** The tables objects created before them lack; `ensure()` creates them on first use. */
const ADDED_SCHEMA = `${RUN_INPUTS_SCHEMA}${LEDGER_SCHEMA}${MIRROR_SCHEMA}${EVENTS_SCHEMA}${MCP_SCHEMA}DROP INDEX IF EXISTS events_by_run;`;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (id TEXT PRIMARY KEY, status TEXT NOT NULL, body TEXT NOT NULL, created_at TEXT NOT NULL);
${RUN_INPUTS_SCHEMA}
CREATE TABLE IF NOT EXISTS messages (idx INTEGER PRIMARY KEY, run_id TEXT NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL, created_at TEXT NOT NULL);
${LEDGER_SCHEMA}CREATE TABLE IF NOT EXISTS outbox (id INTEGER PRIMARY KEY AUTOINCREMENT, statements TEXT NOT NULL);
${MIRROR_SCHEMA}
CREATE TABLE IF NOT EXISTS timers (name TEXT PRIMARY KEY, due_at INTEGER NOT NULL);
${EVENTS_SCHEMA}${MCP_SCHEMA}
`;

type MetaKey =
  | "tenant"
  | "session_id"
  | "agent_id"
  | "created_at"
  | "updated_at"
  | "active_run_id"
  | "seq_ceiling"
  /** Events with a seq up to this one are only in D1: the object was rebuilt above them. */
  | "events_floor"
  /** Events with a seq up to this one are in D1 (mirror.ts drains the ones above it). */
  | "events_mirrored"
  /** The last ticket handed to a queued run (run-lifecycle.ts): the queue's order. */
  | "queue_ticket"
  /** The run that joined the session's history last (headRun); absent on sessions older than it. */
  | "head_run_id"
  /** A stretch's end committed and its terminal event not yet out (`{ run_id, status, reason }`, run-lifecycle.ts). */
  | "unannounced"
  /** Reports of model calls a budget watched, not yet known counted by the tenant's ledger (spend-gate.ts). */
  | "spend_reports";

/**
 * The session's ledger in the object's own SQLite: synchronous, so a check and the write
 * that follows it cannot be split by another request.
 */
export class SessionStore {
  /**
   * Whether the tables added after the first objects (ADDED_SCHEMA) are known to exist in this
   * storage: checked once per instance and storage, not before every read. Cleared when the
   * storage is found empty (`deleteAll()` drops the tables while the instance lives on; every
   * entry point checks `isInitialized` first) and when the schema is created again.
   */
  private ensured = false;
  private readonly messageCache = new MessageCache();
  /** Run records' texts already checked or written by this instance (run-text-cache.ts). */
  private readonly checkedRuns = new RunTextCache();

  constructor(private readonly sql: SqlStorage) {}

  /** Creates the tables older objects lack, and moves an older tool-result ledger's rows into `tool_ledger`. */
  private ensure(): void {
    if (this.ensured) return;
    this.sql.exec(ADDED_SCHEMA);
    const legacy = this.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'tool_results'").toArray();
    if (legacy.length > 0) {
      this.sql.exec(
        "INSERT OR IGNORE INTO tool_ledger (run_id, tool_call_id, output, is_error) SELECT run_id, tool_call_id, output, is_error FROM tool_results",
      );
      this.sql.exec("DROP TABLE tool_results");
    }
    this.ensured = true;
  }

  /**
   * True when this object's storage holds a session. Checked on every entry point, never
   * cached in memory: `deleteAll()` drops the tables while the instance lives on.
   */
  isInitialized(): boolean {
    const table = this.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'meta'").toArray();
    if (table.length === 0) {
      this.ensured = false;
      this.messageCache.reset();
      return false;
    }
    return this.getMeta("session_id") !== null;
  }

  createSchema(): void {
    this.ensured = false;
    this.messageCache.reset();
    this.sql.exec(SCHEMA);
  }

  getMeta(key: MetaKey): string | null {
    const row = this.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = ?", key).toArray()[0];
    return row ? row.value : null;
  }

  setMeta(key: MetaKey, value: string | null): void {
    if (value === null) this.sql.exec("DELETE FROM meta WHERE key = ?", key);
    else this.sql.exec("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", key, value);
  }

  getRun(id: string): RunRecord | null {
    this.ensure();
    const row = this.sql
      .exec<RunRow>("SELECT r.body AS body, i.body AS once FROM runs r LEFT JOIN run_inputs i ON i.id = r.id WHERE r.id = ?", id)
      .toArray()[0];
    if (!row) return null;
    const text = joinRunRow(row);
    if (this.checkedRuns.has(id, text)) return JSON.parse(text) as RunRecord;
    const run = parseRunRecord(text, "object storage");
    this.checkedRuns.keep(id, text);
    return run;
  }

  /**
   * The runs a provider refused as an invalid request (400, or 413 too large): ended in error
   * with that status. Their messages stay in the transcript but no later turn sends them again
   * (model-history.ts), so one input a provider refuses does not fail every later turn.
   */
  refusedRuns(): Set<string> {
    const rows = this.sql.exec<{ id: string }>(
      "SELECT id FROM runs WHERE status = 'error' AND json_extract(body, '$.error.status') IN (400, 413)",
    );
    return new Set(rows.toArray().map((row) => row.id));
  }

  /** A run's status alone, without reading its body. */
  runStatus(id: string): RunStatus | null {
    return this.sql.exec<{ status: RunStatus }>("SELECT status FROM runs WHERE id = ?", id).toArray()[0]?.status ?? null;
  }

  /**
   * Stores a run: its write-once values in their own row the first time (an indexed read
   * tells whether it is there; never cached in memory, `deleteAll()` drops the tables while
   * the instance lives on), then the changing body without them. True when the write-once row
   * was written now (the D1 mirror needs it too).
   */
  putRun(run: RunRecord): boolean {
    this.ensure();
    const { changing, once } = splitRun(run);
    const first = this.sql.exec("SELECT 1 FROM run_inputs WHERE id = ?", run.id).toArray().length === 0;
    if (first) this.sql.exec("INSERT INTO run_inputs (id, body) VALUES (?, ?)", run.id, once);
    this.sql.exec(
      "INSERT INTO runs (id, status, body, created_at) VALUES (?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET status = excluded.status, body = excluded.body",
      run.id,
      run.status,
      changing,
      run.created_at,
    );
    this.checkedRuns.keep(run.id, joinRunRow({ body: changing, once }));
    return first;
  }

  /** The session's newest run (its head: what a plain turn continues), without reading the others. */
  headRun(): RunRecord | null {
    this.ensure();
    const recorded = this.getMeta("head_run_id");
    if (recorded !== null) return this.getRun(recorded);
    // Sessions stored before the head was recorded: the run that joined the history last (a
    // queued one when it started, any other when it was created); a queued run, and one
    // cancelled while queued, is in no history.
    const id = this.sql
      .exec<{ id: string }>(
        `SELECT id FROM runs WHERE status != 'queued'
         AND NOT (status = 'cancelled' AND json_extract(body, '$.queued') IS NOT NULL AND json_extract(body, '$.started_at') IS NULL)
         ORDER BY COALESCE(CASE WHEN json_extract(body, '$.queued') IS NOT NULL THEN json_extract(body, '$.started_at') END, created_at) DESC, id DESC
         LIMIT 1`,
      )
      .toArray()[0]?.id;
    return id === undefined ? null : this.getRun(id);
  }

  /** The run a steer went into: the run it was sent to (pending or seen), or the queued run it became; null when unknown. */
  runSteeredWith(steerId: string): string | null {
    this.ensure();
    const row = this.sql
      .exec<{ id: string }>(
        `SELECT r.id AS id FROM runs r, json_each(r.body, '$.steers') s WHERE json_extract(s.value, '$.id') = ?1
         UNION ALL SELECT r.id FROM runs r, json_each(r.body, '$.steered') s WHERE s.value = ?1
         UNION ALL SELECT id FROM runs WHERE id = ?2
         LIMIT 1`,
        steerId,
        steerId.replace(/^str_/, "run_"),
      )
      .toArray()[0];
    return row?.id ?? null;
  }

  /** The session's queued runs (`on_busy: "enqueue"`), first in line first. */
  queuedRuns(): RunRecord[] {
    this.ensure();
    const ids = this.sql
      .exec<{ id: string }>("SELECT id FROM runs WHERE status = 'queued' ORDER BY json_extract(body, '$.queued')")
      .toArray();
    return ids.flatMap(({ id }) => {
      const run = this.getRun(id);
      return run ? [run] : [];
    });
  }

  listRuns(): RunRecord[] {
    this.ensure();
    return this.sql
      .exec<RunRow>("SELECT r.body AS body, i.body AS once FROM runs r LEFT JOIN run_inputs i ON i.id = r.id ORDER BY r.created_at, r.id")
      .toArray()
      .map((row) => parseRunRow(row, "object storage"));
  }

  /** The run holding the session's turn, if any. */
  activeRun(): RunRecord | null {
    const id = this.getMeta("active_run_id");
    const run = id ? this.getRun(id) : null;
    return run && ACTIVE_STATUSES.includes(run.status) ? run : null;
  }

  nextMessageIndex(): number {
    const row = this.sql.exec<{ n: number | null }>("SELECT MAX(idx) AS n FROM messages").one();
    return row.n === null ? 0 : row.n + 1;
  }

  appendMessage(message: StoredMessage): void {
    this.sql.exec(
      "INSERT INTO messages (idx, run_id, role, content, created_at) VALUES (?, ?, ?, ?, ?)",
      message.index,
      message.run_id,
      message.role,
      JSON.stringify(message.content),
      message.created_at,
    );
  }

  /** The index of the last message of a run, or null when it has none. */
  lastMessageIndexOf(runId: string): number | null {
    const row = this.sql.exec<{ n: number | null }>("SELECT MAX(idx) AS n FROM messages WHERE run_id = ?", runId).one();
    return row.n;
  }

  /** Every message of the session in index order, parsed once per instance (message-cache.ts); read only, never change one. */
  messages(): readonly StoredMessage[] {
    const highest = this.sql.exec<{ n: number | null }>("SELECT MAX(idx) AS n FROM messages").one().n ?? -1;
    return this.messageCache.all(highest, (after) =>
      this.sql
        .exec<{ idx: number; run_id: string; role: string; content: string; created_at: string }>(
          "SELECT idx, run_id, role, content, created_at FROM messages WHERE idx > ? ORDER BY idx",
          after,
        )
        .toArray()
        .map((r) => ({
          message: {
            index: r.idx,
            run_id: r.run_id,
            role: r.role as Role,
            content: parseStored<Block[]>(r.content),
            created_at: r.created_at,
          },
          chars: r.content.length,
        })),
    );
  }

  /** Drops what is kept parsed in memory (after a rolled-back transaction). */
  forgetParsed(): void {
    this.messageCache.reset();
  }

  /**
   * The run tree (run-record.ts, RunBase) without reading whole records: each run's id and
   * `base` (absent for runs made before forks existed), in creation order.
   */
  runTree(): { id: string; base: RunBase | null }[] {
    return this.sql
      .exec<{ id: string; base: string | null }>("SELECT id, json_extract(body, '$.base') AS base FROM runs ORDER BY created_at, id")
      .toArray()
      .map((r) => ({ id: r.id, base: r.base === null ? null : (JSON.parse(r.base) as RunBase) }));
  }

  /** The recorded result of a run's tool call, if any. */
  getToolResult(runId: string, toolCallId: string): LedgerEntry | null {
    this.ensure();
    const row = this.sql
      .exec<{ tool_call_id: string; run_id: string; output: string; is_error: number }>(
        "SELECT tool_call_id, run_id, output, is_error FROM tool_ledger WHERE run_id = ? AND tool_call_id = ?",
        runId,
        toolCallId,
      )
      .toArray()[0];
    return row ? { ...row, is_error: row.is_error === 1 } : null;
  }

  /** Records a tool result once; a second result for the same call of the same run is ignored. */
  recordToolResult(entry: LedgerEntry): void {
    this.ensure();
    this.sql.exec(
      "INSERT OR IGNORE INTO tool_ledger (tool_call_id, run_id, output, is_error) VALUES (?, ?, ?, ?)",
      entry.tool_call_id,
      entry.run_id,
      entry.output,
      entry.is_error ? 1 : 0,
    );
  }

  /** The MCP tools the run listed when it started (JSON as `putMcpTools` stored it), or null before. */
  getMcpTools(runId: string): string | null {
    this.ensure();
    const row = this.sql.exec<{ tools: string }>("SELECT tools FROM run_mcp_tools WHERE run_id = ?", runId).toArray()[0];
    return row ? row.tools : null;
  }

  /** Keeps the run's MCP tool list (once: a second list of the same run is ignored). */
  putMcpTools(runId: string, tools: string): void {
    this.ensure();
    this.sql.exec("INSERT OR IGNORE INTO run_mcp_tools (run_id, tools) VALUES (?, ?)", runId, tools);
  }

  /** Marks a call as sent to its server (before the request leaves). */
  markSent(runId: string, toolCallId: string): void {
    this.ensure();
    this.sql.exec("INSERT OR IGNORE INTO tool_sends (run_id, tool_call_id) VALUES (?, ?)", runId, toolCallId);
  }

  /** Whether the call was sent to its server by an earlier drive of the run. */
  wasSent(runId: string, toolCallId: string): boolean {
    this.ensure();
    return this.sql.exec("SELECT 1 FROM tool_sends WHERE run_id = ? AND tool_call_id = ?", runId, toolCallId).toArray().length > 0;
  }

  /**
   * Puts a commit's statements in the outbox, as few rows as OUTBOX_ENTRY_STATEMENTS and
   * OUTBOX_ENTRY_CHARS allow (a row written is what an object is billed for; a statement larger
   * than the bound is a row alone). D1 rejecting one statement still quarantines only it (mirror.ts).
   */
  enqueueMirror(statements: MirrorStatement[]): void {
    let entry: string[] = [];
    let chars = 0;
    const put = () => {
      if (entry.length > 0) this.sql.exec("INSERT INTO outbox (statements) VALUES (?)", `[${entry.join(",")}]`);
      entry = [];
      chars = 0;
    };
    for (const statement of statements) {
      const text = JSON.stringify(statement);
      if (entry.length >= OUTBOX_ENTRY_STATEMENTS || (entry.length > 0 && chars + text.length > OUTBOX_ENTRY_CHARS)) put();
      entry.push(text);
      chars += text.length;
    }
    put();
  }

  /** Keeps only `statements` of an outbox entry (the ones before them reached D1 one by one). */
  replaceOutboxEntry(id: number, statements: MirrorStatement[]): void {
    this.sql.exec("UPDATE outbox SET statements = ? WHERE id = ?", JSON.stringify(statements), id);
  }

  /** The oldest outbox entries, at most `limit`. */
  outbox(limit = Number.MAX_SAFE_INTEGER): { id: number; statements: MirrorStatement[] }[] {
    return this.sql
      .exec<{ id: number; statements: string }>("SELECT id, statements FROM outbox ORDER BY id LIMIT ?", limit)
      .toArray()
      .map((r) => ({ id: r.id, statements: JSON.parse(r.statements) as MirrorStatement[] }));
  }

  /** Removes the outbox entries up to `lastId` (they went to D1 in order): one statement. */
  removeFromOutbox(lastId: number): void {
    this.sql.exec("DELETE FROM outbox WHERE id <= ?", lastId);
  }

  clearOutbox(): void {
    this.sql.exec("DELETE FROM outbox");
  }

  /** Keeps statements D1 rejects for good aside, with D1's error: they no longer block the rest. */
  quarantine(statements: MirrorStatement[], error: string, at: string): number {
    this.ensure();
    return this.sql
      .exec<{ id: number }>(
        "INSERT INTO quarantine (statements, error, at) VALUES (?, ?, ?) RETURNING id",
        JSON.stringify(statements),
        error,
        at,
      )
      .one().id;
  }

  /** Removes one outbox entry. */
  removeOutboxEntry(id: number): void {
    this.sql.exec("DELETE FROM outbox WHERE id = ?", id);
  }

  /** The quarantined entries (ids, D1's errors, when). */
  quarantined(): { id: number; error: string; at: string }[] {
    this.ensure();
    return this.sql.exec<{ id: number; error: string; at: string }>("SELECT id, error, at FROM quarantine ORDER BY id").toArray();
  }

  /** Notes that a run's log has opened: its `run_started` is stored. */
  markOpened(runId: string): void {
    this.ensure();
    this.sql.exec("INSERT OR IGNORE INTO opened_runs (run_id) VALUES (?)", runId);
  }

  /** Whether a run's log has opened: marked, or (objects older than the mark) any event of it is stored. */
  isOpened(runId: string): boolean {
    this.ensure();
    if (this.sql.exec("SELECT 1 FROM opened_runs WHERE run_id = ?", runId).toArray().length > 0) return true;
    return this.sql.exec("SELECT 1 FROM events WHERE run_id = ? LIMIT 1", runId).toArray().length > 0;
  }

  /** Notes the seq of the first event stored of a run (a later one changes nothing): its events are read from there. */
  noteFirstEvent(runId: string, seq: number): void {
    this.ensure();
    this.sql.exec("INSERT OR IGNORE INTO run_logs (run_id, first_seq) VALUES (?, ?)", runId, seq);
  }

  /** The seq of a run's first stored event, or 0 when it is not known (read its events from the start). */
  private firstSeqOf(runId: string): number {
    return this.sql.exec<{ first_seq: number }>("SELECT first_seq FROM run_logs WHERE run_id = ?", runId).toArray()[0]?.first_seq ?? 0;
  }

  /** Stores an event; one already stored (same seq) is left as it is. */
  putEvent(e: RunEvent): void {
    this.ensure();
    this.insertEventRow(rowOfEvent(e));
  }

  /**
   * The highest seq handed out: that of the newest stored event, or the `seq_ceiling` meta, which
   * records a seq whose event was not stored and the ceiling of events pruned (nextSeq).
   */
  seqCeiling(): number {
    this.ensure();
    const newest = this.sql.exec<{ n: number | null }>("SELECT MAX(seq) AS n FROM events").one().n ?? 0;
    return Math.max(newest, Number(this.getMeta("seq_ceiling") ?? "0"));
  }

  /** Stores events, several in one row when they are of one run (event-packs.ts); one already stored is left as it is. */
  putEvents(events: RunEvent[]): void {
    this.ensure();
    const rows = events.map(rowOfEvent);
    for (const row of rows.length > 1 ? packEvents(rows) : rows) this.insertEventRow(row);
  }

  /** One row of the event log (an event or a pack); one already stored (same seq) is left as it is. */
  private insertEventRow(row: EventRow): void {
    this.sql.exec(
      "INSERT OR IGNORE INTO events (seq, run_id, type, data, created_at) VALUES (?, ?, ?, ?, ?)",
      row.seq,
      row.run_id,
      row.type,
      row.data,
      row.created_at,
    );
  }

  /**
   * Deletes stored events created before `before` (ISO time) that reached the D1 mirror. When the
   * newest goes too, its seq is kept as the ceiling first, so that no seq is handed out again.
   */
  pruneEvents(before: string): void {
    this.ensure();
    const mirrored = Number(this.getMeta("events_mirrored") ?? "0");
    const newest = this.sql
      .exec<{ seq: number; created_at: string }>("SELECT seq, created_at FROM events ORDER BY seq DESC LIMIT 1")
      .toArray()[0];
    if (newest && newest.created_at < before && newest.seq <= mirrored) this.setMeta("seq_ceiling", String(this.seqCeiling()));
    this.sql.exec("DELETE FROM events WHERE created_at < ? AND seq <= ?", before, mirrored);
  }

  /** Up to `limit` stored events after `after` in seq order, of one run or (null) of the whole session. */
  storedEvents(sessionId: string, runId: string | null, after: number, limit: number): RunEvent[] {
    return this.storedEventRows(runId, after, limit).map((row) => eventOfRow(sessionId, row));
  }

  /**
   * The same events as stored (`data` left as its JSON text: the D1 mirror copies it as it is),
   * packs opened (a pack is keyed by its last seq, so one holding events after `after` is found).
   */
  storedEventRows(runId: string | null, after: number, limit: number): EventRow[] {
    this.ensure();
    const rows =
      runId === null
        ? this.sql.exec<EventRow>("SELECT seq, run_id, type, data, created_at FROM events WHERE seq > ? ORDER BY seq LIMIT ?", after, limit)
        : this.sql.exec<EventRow>(
            "SELECT seq, run_id, type, data, created_at FROM events WHERE seq > ? AND run_id = ? ORDER BY seq LIMIT ?",
            Math.max(after, this.firstSeqOf(runId) - 1),
            runId,
            limit,
          );
    return unpackEvents(rows.toArray())
      .filter((row) => row.seq > after)
      .slice(0, limit);
  }

  setTimer(name: string, dueAt: number | null): void {
    if (dueAt === null) this.sql.exec("DELETE FROM timers WHERE name = ?", name);
    else
      this.sql.exec(
        "INSERT INTO timers (name, due_at) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET due_at = excluded.due_at",
        name,
        dueAt,
      );
  }

  timers(): { name: string; due_at: number }[] {
    return this.sql.exec<{ name: string; due_at: number }>("SELECT name, due_at FROM timers ORDER BY due_at").toArray();
  }
}

export type { EventRow } from "./event-packs";

/** An event as a row of the log (`data` as its JSON text). */
const rowOfEvent = (e: RunEvent): EventRow => ({
  seq: e.seq,
  run_id: e.run_id,
  type: e.type,
  data: JSON.stringify(e.data),
  created_at: e.created_at,
});

/** Event rows are written only from RunEvents (here and mirror.ts). */
export function eventOfRow(sessionId: string, row: EventRow): RunEvent {
  return {
    seq: row.seq,
    type: row.type as RunEventType,
    run_id: row.run_id,
    session_id: sessionId,
    created_at: row.created_at,
    data: parseStored<Record<string, unknown>>(row.data),
  };
}
