import { gunzipText, gzipText } from "../../core/gzip-text";

/** An event as the object's storage and the D1 mirror hold it (`data` is JSON text). */
export type EventRow = { seq: number; run_id: string; type: string; data: string; created_at: string };

/**
 * Events kept as packs: one row holds consecutive events of one run (`type` EVENT_PACK, `data`
 * the JSON array of them, `seq` and `created_at` its last event's). The D1 mirror packs what one
 * copy of the log carries (a row of D1 costs a write for itself and one per index: four an
 * event before), and the object packs the streamed pieces a delta window releases together
 * (delta-buffer.ts). Readers open packs (docs/performance.md, "What a run costs"); rows written
 * before packs stay single events, and reads take both.
 */
export const EVENT_PACK = "event_pack";

/**
 * A pack as the D1 mirror keeps it: its `data` gzipped and in base64 (the JSON of a run's events
 * is repetitive: a fifth or less of its size). D1 bills its storage by the byte, a pack a few
 * KB; the object's own packs stay plain JSON (read on every replay).
 */
export const EVENT_PACK_GZ = "event_pack_gz";

/** Characters of the events of one pack (D1 allows 2 MB per row; the outbox statement carries the pack too). */
export const PACK_CHARS = 200_000;

/** One event inside a pack: its `data` is spliced in as the JSON text the object stores, never parsed on the way. */
const packed = (row: EventRow) =>
  `{"seq":${row.seq},"type":${JSON.stringify(row.type)},"data":${row.data},"created_at":${JSON.stringify(row.created_at)}}`;

/** Consecutive events of one run packed together, each pack within PACK_CHARS (an event larger than that is a pack alone). */
export function packEvents(rows: EventRow[]): EventRow[] {
  const packs: EventRow[] = [];
  let members: string[] = [];
  let last: EventRow | null = null;
  let size = 0;
  const close = () => {
    if (last === null || members.length === 0) return;
    packs.push({ seq: last.seq, run_id: last.run_id, type: EVENT_PACK, data: `[${members.join(",")}]`, created_at: last.created_at });
    members = [];
    size = 0;
  };
  for (const row of rows) {
    const text = packed(row);
    if (last !== null && (last.run_id !== row.run_id || size + text.length > PACK_CHARS)) close();
    members.push(text);
    size += text.length + 1;
    last = row;
  }
  close();
  return packs;
}

type PackMember = { seq: number; type: string; data: unknown; created_at: string };

/**
 * The events of rows read in seq order, packs opened, in seq order, each seq once: a batch D1 took whose mark the
 * object did not record (it died in between) is sent again from the old mark, and may then pack
 * the same events with later ones under another seq.
 */
export function unpackEvents(rows: EventRow[]): EventRow[] {
  // Rows read in seq order with no pack among them are the events already (a seq is a row's key).
  if (!rows.some((row) => row.type === EVENT_PACK)) return rows;
  const bySeq = new Map<number, EventRow>();
  for (const row of rows) {
    if (row.type !== EVENT_PACK) {
      if (!bySeq.has(row.seq)) bySeq.set(row.seq, row);
      continue;
    }
    for (const member of JSON.parse(row.data) as PackMember[]) {
      if (bySeq.has(member.seq)) continue;
      bySeq.set(member.seq, {
        seq: member.seq,
        run_id: row.run_id,
        type: member.type,
        data: JSON.stringify(member.data),
        created_at: member.created_at,
      });
    }
  }
  return [...bySeq.values()].sort((a, b) => a.seq - b.seq);
}

/** Packs as D1 keeps them (EVENT_PACK_GZ); other rows as they are. */
export const gzipPacks = (rows: EventRow[]): Promise<EventRow[]> =>
  Promise.all(rows.map(async (row) => (row.type === EVENT_PACK ? { ...row, type: EVENT_PACK_GZ, data: await gzipText(row.data) } : row)));

/** D1's rows with their gzipped packs opened back into plain packs (then `unpackEvents`). */
export const gunzipPacks = (rows: EventRow[]): Promise<EventRow[]> =>
  Promise.all(rows.map(async (row) => (row.type === EVENT_PACK_GZ ? { ...row, type: EVENT_PACK, data: await gunzipText(row.data) } : row)));
