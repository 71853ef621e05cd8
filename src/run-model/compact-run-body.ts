import { gunzipText, gzipText } from "../core/gzip-text";
import { parseStored } from "../core/json-depth";

/**
 * A run's changing body as the D1 mirror keeps it: its answer (`output`) and its checkpoints, the
 * larger part of a finished run's body that no query of D1 reads, gzipped into one `_gz` field
 * (base64) when they take more than COMPACT_OVER characters; every other field stays plain JSON,
 * where D1's queries read it (`$.metrics` for usage, `$.required_actions` for a paused run). The
 * object's own storage keeps the body plain. Readers of D1's bodies open it first (`openRunBody`).
 */
const GZ = "_gz";
const COLD = ["output", "checkpoints"] as const;
const COMPACT_OVER = 512;

/** The body with its cold fields gzipped, or the body itself (small, not an object, or not parsed and written back). */
export async function compactRunBody(body: string): Promise<string> {
  if (body.length <= COMPACT_OVER) return body;
  try {
    return await compacted(body);
  } catch {
    return body;
  }
}

async function compacted(body: string): Promise<string> {
  const record = JSON.parse(body) as Record<string, unknown>;
  if (record === null || typeof record !== "object" || Array.isArray(record) || GZ in record) return body;
  const cold: Record<string, unknown> = {};
  for (const key of COLD) if (key in record) cold[key] = record[key];
  const text = JSON.stringify(cold);
  if (text.length <= COMPACT_OVER) return body;
  const hot = { ...record };
  for (const key of COLD) delete hot[key];
  return JSON.stringify({ ...hot, [GZ]: await gzipText(text) });
}

/** A body as D1 holds it, its cold fields back in place (a body without `_gz` as it is). */
export async function openRunBody(body: string): Promise<string> {
  if (!body.includes(`"${GZ}":"`)) return body;
  const record = parseStored<Record<string, unknown>>(body);
  const packed = record[GZ];
  if (typeof packed !== "string") return body;
  const cold = JSON.parse(await gunzipText(packed)) as Record<string, unknown>;
  delete record[GZ];
  return JSON.stringify({ ...record, ...cold });
}

/**
 * A run's write-once values as the D1 mirror keeps them (`run_inputs.body`): gzipped, in base64
 * after a `gz:` mark (no query of D1 reads inside them; JSON text never starts so), when larger
 * than COMPACT_OVER characters. Readers open them first (`openRunInputs`).
 */
const GZ_MARK = "gz:";

export async function compactRunInputs(once: string): Promise<string> {
  return once.length <= COMPACT_OVER ? once : `${GZ_MARK}${await gzipText(once)}`;
}

/** Write-once values as D1 holds them, as JSON text (a row written before compaction as it is). */
export async function openRunInputs<T extends string | null>(once: T): Promise<T> {
  return (once?.startsWith(GZ_MARK) ? await gunzipText(once.slice(GZ_MARK.length)) : once) as T;
}

/** A run's D1 row (its body and write-once values) as D1 holds it, opened for `parseRunRow`. */
export const openRunRow = async (row: { body: string; once: string | null }) => ({
  body: await openRunBody(row.body),
  once: await openRunInputs(row.once),
});
