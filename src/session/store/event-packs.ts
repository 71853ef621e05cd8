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

/** The streamed pieces a stretch may hold: consecutive deltas of one type, run, step and attempt. */
const STREAMED = new Set(["content_delta", "reasoning_delta"]);

type Piece = { row: EventRow; text: string; step: number; attempt: number; at: number };

/**
 * A streamed piece as a stretch can hold it, or null: its `data` is exactly `{ text, step, attempt }`
 * (so that it is written back byte for byte) and its `created_at` an ISO time.
 */
function pieceOf(row: EventRow): Piece | null {
  if (!STREAMED.has(row.type)) return null;
  let data: unknown;
  try {
    data = JSON.parse(row.data);
  } catch {
    return null;
  }
  const { text, step, attempt } = (data ?? {}) as { text?: unknown; step?: unknown; attempt?: unknown };
  if (typeof text !== "string" || typeof step !== "number" || typeof attempt !== "number") return null;
  if (JSON.stringify({ text, step, attempt }) !== row.data) return null;
  const at = Date.parse(row.created_at);
  if (Number.isNaN(at) || new Date(at).toISOString() !== row.created_at) return null;
  return { row, text, step, attempt, at };
}

/**
 * A stretch of streamed pieces as one member: `{ seq, type, stretch: { step, attempt, texts, at }, created_at }`,
 * `seq` and `created_at` its first piece's, `texts` each piece's text and `at` each piece's time in ms after the
 * first. `unpackEvents` gives back each piece as it was (its seq, its `data` text, its `created_at`).
 */
function stretchText(pieces: Piece[]): string {
  const [first] = pieces;
  if (first === undefined) return "";
  const stretch = { step: first.step, attempt: first.attempt, texts: pieces.map((p) => p.text), at: pieces.map((p) => p.at - first.at) };
  return `{"seq":${first.row.seq},"type":${JSON.stringify(first.row.type)},"stretch":${JSON.stringify(stretch)},"created_at":${JSON.stringify(first.row.created_at)}}`;
}

/** Members of a pack in order, each with the last event it holds; with `stretches`, consecutive pieces as one member. */
function membersOf(rows: EventRow[], stretches: boolean): { text: string; last: EventRow }[] {
  if (!stretches) return rows.map((row) => ({ text: packed(row), last: row }));
  const members: { text: string; last: EventRow }[] = [];
  let run: Piece[] = [];
  const close = () => {
    const last = run.at(-1);
    if (last !== undefined) members.push({ text: run.length === 1 ? packed(last.row) : stretchText(run), last: last.row });
    run = [];
  };
  for (const row of rows) {
    const piece = pieceOf(row);
    const previous = run.at(-1);
    const continues =
      piece !== null &&
      previous !== undefined &&
      previous.row.run_id === row.run_id &&
      previous.row.type === row.type &&
      previous.row.seq + 1 === row.seq &&
      previous.step === piece.step &&
      previous.attempt === piece.attempt;
    if (!continues) close();
    if (piece !== null) run.push(piece);
    else members.push({ text: packed(row), last: row });
  }
  close();
  return members;
}

/**
 * Consecutive events of one run packed together, each pack within PACK_CHARS (an event larger than that is a pack
 * alone). With `stretches` (the D1 mirror's packs), consecutive streamed pieces are one member (`stretchText`):
 * their seq, type, step, attempt and time are said once, not once a piece.
 */
export function packEvents(rows: EventRow[], { stretches = false }: { stretches?: boolean } = {}): EventRow[] {
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
  for (const member of membersOf(rows, stretches)) {
    if (last !== null && (last.run_id !== member.last.run_id || size + member.text.length > PACK_CHARS)) close();
    members.push(member.text);
    size += member.text.length + 1;
    last = member.last;
  }
  close();
  return packs;
}

type PackMember = {
  seq: number;
  type: string;
  data?: unknown;
  stretch?: { step: number; attempt: number; texts: string[]; at: number[] };
  created_at: string;
};

/** A pack's member as the events it holds (a stretch's pieces, each as it was). */
function eventsOfMember(member: PackMember, runId: string): EventRow[] {
  const { stretch } = member;
  if (stretch === undefined)
    return [{ seq: member.seq, run_id: runId, type: member.type, data: JSON.stringify(member.data), created_at: member.created_at }];
  const start = Date.parse(member.created_at);
  return stretch.texts.map((text, i) => ({
    seq: member.seq + i,
    run_id: runId,
    type: member.type,
    data: JSON.stringify({ text, step: stretch.step, attempt: stretch.attempt }),
    created_at: new Date(start + (stretch.at[i] ?? 0)).toISOString(),
  }));
}

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
      for (const event of eventsOfMember(member, row.run_id)) if (!bySeq.has(event.seq)) bySeq.set(event.seq, event);
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
