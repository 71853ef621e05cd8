/**
 * A bounded, isolate-level map whose entries are served while younger than the age a lookup
 * allows (so lowering the allowed age takes effect at once, also for entries already stored).
 *
 * Invalidation is race-free: a lookup takes a `ticket()` before it reads the store and passes it
 * to `set`; any `delete`/`deleteWhere` after the ticket was taken makes that `set` a no-op, so a
 * read that started before an invalidation can never put the old value back.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; storedAt: number }>();
  private epoch = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The value stored under `key` less than `maxAgeMs` ago, unless it was invalidated. */
  get(key: string, maxAgeMs: number): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (this.now() - entry.storedAt >= maxAgeMs) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /** A ticket to pass to `set`: taken before reading the store. */
  ticket(): number {
    return this.epoch;
  }

  /** Stores `value`, unless something was invalidated since `ticket` was taken. */
  set(key: string, value: V, ticket: number): void {
    if (ticket !== this.epoch) return;
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(key, { value, storedAt: this.now() });
  }

  /** Forgets `key`, and voids every `set` whose ticket was taken before. */
  delete(key: string): void {
    this.epoch++;
    this.entries.delete(key);
  }

  /** Forgets every entry whose value matches, and voids every `set` whose ticket was taken before. */
  deleteWhere(matches: (value: V) => boolean): void {
    this.epoch++;
    for (const [key, entry] of this.entries) if (matches(entry.value)) this.entries.delete(key);
  }
}
