import { isTerminal, type RunEvent } from "../stream/events";
import { mirrorEvents, mirrorLastSeq } from "./mirror-statements";
import type { SessionIdentity } from "../object/protocol";
import { eventOfRow, type EventRow, type MirrorStatement, type SessionStore } from "./session-store";

/** Events read per page (a replay, a JSON answer), from the object and from D1. */
export const EVENT_PAGE = 500;
/** A buffer this long is written at once, whatever the step (one very long answer). */
const MAX_BUFFERED = 500;

/**
 * The session's stored event log (API.md, Events). Emitted events of runs with
 * `store_events` wait in memory and are written once per step: in the step's storage
 * transaction, with their D1 statements in the outbox. A read merges what is stored with
 * what is still buffered, so a resume is exact even between two writes.
 *
 * An object rebuilt from D1 (empty storage) does not copy the old events back: seqs up to
 * `events_floor` are read from D1 when asked for, and the object's own log starts above it.
 */
export class EventLog {
  private buffer: RunEvent[] = [];
  private written = 0;
  /** Runs whose current stretch has begun and not yet ended in this instance. */
  private readonly open = new Set<string>();

  constructor(
    private readonly store: SessionStore,
    private readonly db: D1Database,
  ) {}

  /**
   * Notes an emitted event, buffering it when `stored`. True when the buffer must be written
   * before the event is published: a terminal event (a client that sees a run end may ask for
   * its events at once), or a full buffer.
   */
  record(event: RunEvent, stored: boolean): boolean {
    if (isTerminal(event.type)) this.open.delete(event.run_id);
    else this.open.add(event.run_id);
    if (!stored) return false;
    this.buffer.push(event);
    return isTerminal(event.type) || this.buffer.length >= MAX_BUFFERED;
  }

  get pending(): boolean {
    return this.buffer.length > 0;
  }

  /** Opens a stretch of `runId` in this instance: the events that end a run (its finish) go out. */
  openStretch(runId: string): void {
    this.open.add(runId);
  }

  /** Whether a stretch of `runId` is under way in this instance (begun, its terminal event not yet emitted). */
  isOpen(runId: string): boolean {
    return this.open.has(runId);
  }

  /**
   * Writes the buffer to the object's storage and returns its D1 statements, one outbox entry
   * each. Call inside the storage transaction, then `persisted()` once it has committed.
   */
  persist(): MirrorStatement[][] {
    this.written = this.buffer.length;
    if (this.written === 0) return [];
    this.store.putEvents(this.buffer);
    const tenant = this.store.getMeta("tenant") ?? "";
    const sessionId = this.store.getMeta("session_id") ?? "";
    const statements = mirrorEvents(tenant, sessionId, this.buffer).map((s) => [s]);
    statements.push([mirrorLastSeq(tenant, sessionId, Number(this.store.getMeta("seq_ceiling") ?? "0"))]);
    return statements;
  }

  /** Drops what the last `persist` wrote: its transaction committed. */
  persisted(): void {
    this.buffer.splice(0, this.written);
    this.written = 0;
  }

  /** Forgets everything in memory (the storage was wiped or deleted). */
  reset(): void {
    this.buffer = [];
    this.written = 0;
    this.open.clear();
  }

  /**
   * Up to `limit` events after `after` in seq order, of one run or (null) of the whole session:
   * from D1 below the floor, then the object's storage, then the buffer.
   */
  async read(identity: SessionIdentity, runId: string | null, after: number, limit = EVENT_PAGE): Promise<RunEvent[]> {
    const floor = Number(this.store.getMeta("events_floor") ?? "0");
    const older = after < floor ? await this.readMirror(identity, runId, after, floor, limit) : [];
    if (older.length >= limit) return older;
    // Read after the await, in one synchronous stretch: a persist cannot move events between the two.
    const from = Math.max(after, floor);
    const stored = this.store.storedEvents(identity.session_id, runId, from, limit - older.length);
    const top = stored.at(-1)?.seq ?? from;
    const buffered = this.buffer.filter((e) => e.seq > top && (runId === null || e.run_id === runId));
    return [...older, ...stored, ...buffered].slice(0, limit);
  }

  /** Every event after `after` (all pages). */
  async readAll(identity: SessionIdentity, runId: string | null, after: number): Promise<RunEvent[]> {
    const events: RunEvent[] = [];
    let page: RunEvent[];
    do {
      page = await this.read(identity, runId, events.at(-1)?.seq ?? after);
      events.push(...page);
    } while (page.length === EVENT_PAGE);
    return events;
  }

  private async readMirror(identity: SessionIdentity, runId: string | null, after: number, floor: number, limit: number) {
    const columns = "SELECT seq, run_id, type, data, created_at FROM events WHERE tenant = ? AND session_id = ?";
    const statement =
      runId === null
        ? this.db.prepare(`${columns} AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?`).bind(identity.tenant, identity.session_id, after, floor, limit)
        : this.db
            .prepare(`${columns} AND run_id = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?`)
            .bind(identity.tenant, identity.session_id, runId, after, floor, limit);
    const { results } = await statement.all<EventRow>();
    return results.map((row) => eventOfRow(identity.session_id, row));
  }
}
