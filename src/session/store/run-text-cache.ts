/** Texts longer than this are not kept (a run record is at most 1.8 MB). */
const MAX_TEXT = 250_000;
/** Runs kept: the loop reads the active one, a branch its parent. */
const MAX_RUNS = 4;

/**
 * The stored text of a few runs' records (their joined rows, run-inputs.ts) that this instance
 * has checked when reading them, or has itself written. A read whose text is exactly the one
 * kept skips the depth check and the schema (run-record-schema.ts), whose result is the parsed
 * JSON itself (loose objects, no defaults): `JSON.parse` of the text gives the same record.
 * It never answers from memory alone: the text is read from storage every time and compared,
 * so a rolled-back write, a wiped storage or a changed row is simply a miss.
 */
export class RunTextCache {
  private readonly texts = new Map<string, string>();

  /** Whether `text` is the one kept for run `id`. */
  has(id: string, text: string): boolean {
    return this.texts.get(id) === text;
  }

  /** Keeps `text` for run `id`, the newest; the oldest goes first. */
  keep(id: string, text: string): void {
    this.texts.delete(id);
    if (text.length > MAX_TEXT) return;
    this.texts.set(id, text);
    if (this.texts.size > MAX_RUNS) this.texts.delete(this.texts.keys().next().value as string);
  }
}
