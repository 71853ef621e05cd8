import { errorMessage } from "../../core/errors";
import { nowIso } from "../../core/ids";
import { log } from "../../core/log";
import { gzipPacks, packEvents } from "./event-packs";
import { packMessages } from "./message-packs";
import {
  isQuarantineRecord,
  mirrorLastSeq,
  mirrorPacks,
  mirrorQuarantined,
  withCompactRunBodies,
  withoutSupersededRuns,
} from "./mirror-statements";
import type { EventRow, MirrorStatement, SessionStore } from "./session-store";

/**
 * Bounds of one D1 batch. D1 (developers.cloudflare.com/d1/platform/limits) allows 1,000
 * queries per Worker invocation (50 on Free), 100 bound parameters and 100 KB of SQL per
 * statement, and 2 MB per value or row; our statements have a fixed SQL text (drizzle templates,
 * db/statements.ts) and at most 10 parameters (events travel as one JSON parameter,
 * mirror-statements.ts), so what a batch must
 * bound is its statement count and the bytes of its parameters.
 */
export const MAX_BATCH_STATEMENTS = 40;
export const MAX_BATCH_CHARS = 1_000_000;
/** Outbox entries read per batch, and events read per batch from the object's log. */
const ENTRIES_PER_BATCH = 40;
const EVENTS_PER_BATCH = 500;
/** An entry that fails alone this many times while D1 answers other queries is quarantined. */
export const QUARANTINE_AFTER = 3;

/**
 * What one batch carries: outbox entries (up to `lastId`) and/or the events up to `lastSeq`. After
 * a failed batch an entry of several statements goes one statement at a time: `rest` is what its
 * entry keeps once the unit went through (null: the unit is the whole entry).
 */
type Unit = {
  statements: MirrorStatement[];
  entryId: number | null;
  lastSeq: number | null;
  rest: MirrorStatement[] | null;
  /** A page of the event log, packed: its statements are sized plain and sent with the packs gzipped (`gzipEvents`). */
  packs?: { rows: EventRow[]; ceiling: MirrorStatement };
};

const sizeOf = (statements: MirrorStatement[]) =>
  statements.reduce((n, s) => n + s.params.reduce<number>((m, p) => m + (typeof p === "string" ? p.length : 8), s.sql.length), 0);

/**
 * Copies the object's ledger to the D1 mirror: the outbox entries in order, then the stored
 * events above the persisted `events_mirrored` mark, read from the events table itself (nothing
 * depends on memory). Batches are bounded (above). A failed batch is retried one unit at a
 * time; a unit that fails alone while D1 answers a probe is D1 rejecting it, and after
 * QUARANTINE_AFTER such failures it is moved to the `quarantine` table, logged
 * (`outbox_quarantined`), recorded in D1's `mirror_quarantine` for the operator and skipped. A failure while D1 does not answer is transient: the
 * caller retries on the alarm.
 */
export class Mirror {
  /** After a failed batch, units go one at a time until one fails alone or all went through. */
  private singly = false;
  /** Failures of a unit sent alone while D1 answered, by its key. */
  private readonly rejections = new Map<string, number>();

  constructor(
    private readonly store: SessionStore,
    /** Called when nothing is left to copy (the caller disarms its retry timer). */
    private readonly onIdle: () => void,
    /** Called with each batch that went through and D1's results, statement by statement (the rows a `RETURNING` gave). */
    private readonly onApplied: (statements: MirrorStatement[], results: D1Result[]) => void = () => {},
  ) {}

  /** True when everything reached D1; false when a batch failed and waits for a retry. */
  async drain(db: D1Database): Promise<boolean> {
    for (;;) {
      const units = this.nextUnits();
      if (units.length === 0) {
        this.singly = false;
        this.onIdle();
        return true;
      }
      await Promise.all(units.map((unit) => this.gzipEvents(unit)));
      // The batch as D1 takes it: a run's last upsert alone, its body compacted, a session's messages packed (message-packs.ts).
      const statements = await packMessages(await withCompactRunBodies(withoutSupersededRuns(units.flatMap((u) => u.statements))));
      let results: D1Result[];
      try {
        results = await db.batch(statements.map((s) => db.prepare(s.sql).bind(...s.params)));
      } catch (error) {
        const message = errorMessage(error);
        if (units.length > 1) {
          log({ event: "outbox_failed", session_id: this.sessionId(), statements: statements.length, message });
          this.singly = true;
          continue;
        }
        const [unit] = units;
        if (unit && !(await this.rejectedAlone(db, unit, message))) return false;
        continue;
      }
      this.done(units);
      this.onApplied(statements, results);
    }
  }

  private done(units: Unit[]): void {
    for (const unit of units) if (unit.entryId !== null && unit.rest !== null) this.keepRest(unit.entryId, unit.rest);
    const whole = units.filter((u) => u.rest === null);
    const lastId = whole.reduce<number | null>((n, u) => (u.entryId === null ? n : Math.max(n ?? 0, u.entryId)), null);
    if (lastId !== null) this.store.removeFromOutbox(lastId);
    const lastSeq = units.reduce<number | null>((n, u) => (u.lastSeq === null ? n : Math.max(n ?? 0, u.lastSeq)), null);
    if (lastSeq !== null) this.store.setMeta("events_mirrored", String(lastSeq));
    for (const unit of units) this.rejections.delete(keyOf(unit));
  }

  /** What an entry keeps once one of its statements reached D1 or was quarantined: the rest, or nothing. */
  private keepRest(entryId: number, rest: MirrorStatement[]): void {
    if (rest.length > 0) this.store.replaceOutboxEntry(entryId, rest);
    else this.store.removeOutboxEntry(entryId);
  }

  /**
   * A unit failed alone. True when it was quarantined (the drain goes on), false when the
   * drain stops for a retry: D1 did not answer a probe (transient), or it has not failed often enough yet.
   */
  private async rejectedAlone(db: D1Database, unit: Unit, message: string): Promise<boolean> {
    const sessionId = this.sessionId();
    try {
      await db.batch([db.prepare("SELECT 1")]);
    } catch {
      log({ event: "outbox_failed", session_id: sessionId, statements: unit.statements.length, message, d1: "unreachable" });
      return false;
    }
    const key = keyOf(unit);
    const count = (this.rejections.get(key) ?? 0) + 1;
    this.rejections.set(key, count);
    log({ event: "outbox_failed", session_id: sessionId, statements: unit.statements.length, message, rejected: count });
    if (count < QUARANTINE_AFTER) return false;
    const at = nowIso();
    const id = this.store.quarantine(unit.statements, message, at);
    if (unit.entryId !== null) this.keepRest(unit.entryId, unit.rest ?? []);
    // The operator learns of it through D1 (which answers: the probe went through); a record
    // that D1 rejects in turn is kept in the object only.
    if (!unit.statements.every(isQuarantineRecord)) {
      const tenant = this.store.getMeta("tenant") ?? "";
      this.store.enqueueMirror([mirrorQuarantined(tenant, sessionId, { id, statements: unit.statements.length, error: message, at })]);
    }
    if (unit.lastSeq !== null) this.store.setMeta("events_mirrored", String(unit.lastSeq));
    this.rejections.delete(key);
    log({ event: "outbox_quarantined", session_id: sessionId, statements: unit.statements.length, message });
    return true;
  }

  /** The next batch: outbox entries in order, then events, within the bounds; one unit when `singly`. */
  private nextUnits(): Unit[] {
    const units: Unit[] = [];
    let count = 0;
    let chars = 0;
    const fits = (statements: MirrorStatement[]) =>
      units.length === 0 ||
      (!this.singly && count + statements.length <= MAX_BATCH_STATEMENTS && chars + sizeOf(statements) <= MAX_BATCH_CHARS);
    const add = (unit: Unit) => {
      units.push(unit);
      count += unit.statements.length;
      chars += sizeOf(unit.statements);
    };
    for (const entry of this.store.outbox(this.singly ? 1 : ENTRIES_PER_BATCH)) {
      if (this.singly && entry.statements.length > 1) {
        const [first, ...rest] = entry.statements;
        if (first) add({ statements: [first], entryId: entry.id, lastSeq: null, rest });
        return units;
      }
      if (!fits(entry.statements)) return units;
      add({ statements: entry.statements, entryId: entry.id, lastSeq: null, rest: null });
    }
    const events = this.eventUnit();
    if (events && fits(events.statements)) add(events);
    return units;
  }

  /** The stored events above the mirrored mark, with the session's highest seq. */
  private eventUnit(): Unit | null {
    const sessionId = this.sessionId();
    const mark = Number(this.store.getMeta("events_mirrored") ?? "0");
    const page = this.store.storedEventRows(null, mark, this.singly ? 1 : EVENTS_PER_BATCH);
    if (page.length === 0) return null;
    // A page is cut to the batch's size bound (large tool outputs ride in events), keeping at least one.
    const rowChars = (row: EventRow) => JSON.stringify(row.data).length + 200;
    let count = 0;
    let chars = 0;
    for (const row of page) {
      chars += rowChars(row);
      if (count > 0 && chars > MAX_BATCH_CHARS) break;
      count++;
    }
    const events = page.slice(0, count);
    const tenant = this.store.getMeta("tenant") ?? "";
    // D1's packs hold a stretch of streamed pieces as one member (event-packs.ts): a fifth of their JSON.
    const rows = packEvents(events, { stretches: true });
    const ceiling = mirrorLastSeq(tenant, sessionId, this.store.seqCeiling());
    const statements = [...mirrorPacks(tenant, sessionId, rows), ceiling];
    return { statements, entryId: null, lastSeq: events.at(-1)?.seq ?? null, rest: null, packs: { rows, ceiling } };
  }

  /** An event page's statements with its packs gzipped, as D1 keeps them (event-packs.ts). */
  private async gzipEvents(unit: Unit): Promise<void> {
    if (!unit.packs) return;
    const { rows, ceiling } = unit.packs;
    unit.packs = undefined;
    unit.statements = [...mirrorPacks(this.store.getMeta("tenant") ?? "", this.sessionId(), await gzipPacks(rows)), ceiling];
  }

  private sessionId(): string {
    return this.store.getMeta("session_id") ?? "";
  }
}

/** A unit's key for its rejection count: an entry's statement by how many of the entry's statements follow it. */
const keyOf = (unit: Unit) => (unit.entryId !== null ? `entry:${unit.entryId}:${unit.rest?.length ?? "all"}` : `events:${unit.lastSeq}`);
