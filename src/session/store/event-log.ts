import { and, eq, gt, lte } from "drizzle-orm";
import { database } from "../../db/client";
import { events } from "../../db/schema";
import { isTerminal, type RunEvent } from "../stream/events";
import type { SessionIdentity } from "../../run-model/session-protocol";
import { gunzipPacks, unpackEvents } from "./event-packs";
import { eventOfRow, type EventRow, type SessionStore } from "./session-store";

/** Events read per page (a replay, a JSON answer), from the object and from D1. */
export const EVENT_PAGE = 500;
/**
 * The session's stored event log (docs/api.md, Events). An event of a run with `store_events` is
 * written to the object's `events` table when it is emitted, before it is published: a Durable
 * Object holds every outgoing message (an SSE frame, a socket message, an RPC answer) until the
 * writes before it are durable, so a client never sees a seq that a crash can lose. Writes
 * made without an await in between are coalesced into one, so a step's events cost no extra
 * round trip. The D1 copy is drained from this table by the mirror (mirror.ts).
 *
 * An object rebuilt from D1 (empty storage) does not copy the old events back: seqs up to
 * `events_floor` are read from D1 when asked for, and the object's own log starts above it.
 */
export class EventLog {
  /** Runs whose current stretch has begun and not yet ended in this instance. */
  private readonly open = new Set<string>();
  /** Runs known (in this instance) to have their `run_started` stored. */
  private readonly opened = new Set<string>();
  /** Stored events held to be written together (`packed`), or null. */
  private pack: RunEvent[] | null = null;
  /** Runs whose first stored event this instance has noted (SessionStore.noteFirstEvent). */
  private readonly logged = new Set<string>();

  constructor(
    private readonly store: SessionStore,
    private readonly db: D1Database,
  ) {}

  /** Notes an emitted event and, when `stored`, writes it to the object's storage (or to the pack being made). */
  record(event: RunEvent, stored: boolean): void {
    if (isTerminal(event.type)) this.open.delete(event.run_id);
    else this.open.add(event.run_id);
    if (!stored) return;
    if (this.pack) this.pack.push(event);
    else this.store.putEvent(event);
    if (!this.logged.has(event.run_id)) {
      this.store.noteFirstEvent(event.run_id, event.seq);
      this.logged.add(event.run_id);
    }
    if (event.type === "run_started" && !this.opened.has(event.run_id)) {
      this.store.markOpened(event.run_id);
      this.opened.add(event.run_id);
    }
  }

  /**
   * Whether the run's stored log has opened (its `run_started` is stored). False for a run
   * whose object died between the run's creation and its first event: its resume opens it.
   */
  hasOpened(runId: string): boolean {
    if (this.opened.has(runId)) return true;
    if (!this.store.isOpened(runId)) return false;
    this.opened.add(runId);
    return true;
  }

  /**
   * Runs `emitAll` (deltas released together, delta-buffer.ts) with the events it stores written
   * as one row of packed events (event-packs.ts), after the last of them and in the same
   * synchronous write: one row written for a window's pieces instead of one each.
   */
  packed(emitAll: () => void): void {
    this.pack = [];
    try {
      emitAll();
    } finally {
      const events = this.pack;
      this.pack = null;
      this.store.putEvents(events);
    }
  }

  /** Opens a stretch of `runId` in this instance: the events that end a run (its finish) go out. */
  openStretch(runId: string): void {
    this.open.add(runId);
  }

  /** Whether a stretch of `runId` is under way in this instance (begun, its terminal event not yet emitted). */
  isOpen(runId: string): boolean {
    return this.open.has(runId);
  }

  /** Forgets everything in memory (the storage was wiped or deleted). */
  reset(): void {
    this.open.clear();
    this.opened.clear();
    this.logged.clear();
  }

  /**
   * Up to `limit` events after `after` in seq order, of one run or (null) of the whole session:
   * from D1 below the floor, then the object's storage.
   */
  async read(identity: SessionIdentity, runId: string | null, after: number, limit = EVENT_PAGE): Promise<RunEvent[]> {
    const floor = Number(this.store.getMeta("events_floor") ?? "0");
    const older = after < floor ? await this.readMirror(identity, runId, after, floor, limit) : [];
    if (older.length >= limit) return older;
    const stored = this.store.storedEvents(identity.session_id, runId, Math.max(after, floor), limit - older.length);
    return [...older, ...stored];
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

  /**
   * Events after `after` up to the floor from D1, whose rows are packs of events (event-packs.ts)
   * keyed by their last seq: a pack holding events after `after` has its key after it too.
   */
  private async readMirror(identity: SessionIdentity, runId: string | null, after: number, floor: number, limit: number) {
    const found: EventRow[] = [];
    let rowsAfter = after;
    while (found.length < limit) {
      const rows = await database(this.db)
        .select({ seq: events.seq, run_id: events.runId, type: events.type, data: events.data, created_at: events.createdAt })
        .from(events)
        .where(
          and(
            eq(events.tenant, identity.tenant),
            eq(events.sessionId, identity.session_id),
            runId === null ? undefined : eq(events.runId, runId),
            gt(events.seq, rowsAfter),
            lte(events.seq, floor),
          ),
        )
        .orderBy(events.seq)
        .limit(limit)
        .all();
      const last = rows.at(-1);
      if (last === undefined) break;
      const seen = found.at(-1)?.seq ?? after;
      found.push(...unpackEvents(await gunzipPacks(rows)).filter((event) => event.seq > seen && event.seq <= floor));
      rowsAfter = last.seq;
      if (rows.length < limit) break;
    }
    return found.slice(0, limit).map((row) => eventOfRow(identity.session_id, row));
  }
}
