/**
 * The key of the deletion tombstone in the object's synchronous key-value storage (beside the
 * session's SQLite tables, gone with them in `deleteAll`): set from the first instant of a delete.
 */
const TOMBSTONE_KEY = "deleting_since";

/** A loop driving one run: its abort controller and a promise that resolves once the loop has stopped. */
type Driver = { abort: AbortController; stopped: Promise<void> };

/**
 * The bookkeeping of RunLifecycle (run-lifecycle.ts), its only user: the loops that drive runs
 * (each with its abort controller and its "stopped" promise), the runs between their creation
 * and their first step (`launching`), the terminal events not out yet (`announcing`) and the
 * deletion tombstone. It moves no run; it only remembers what the lifecycle is doing.
 */
export class RunDrivers {
  private readonly drivers = new Map<string, Driver>();
  private readonly launching = new Set<string>();
  private readonly announcing = new Map<string, Promise<void>>();
  /** A delete in progress in this instance (the tombstone alone may be left by an evicted one). */
  private deletion: Promise<unknown> | null = null;

  constructor(private readonly storage: DurableObjectStorage) {}

  /** True while a loop of this instance drives the run. */
  isDriven(runId: string): boolean {
    return this.drivers.has(runId);
  }

  /** True between a run's creation and its first step: `wake()` must not resume it. */
  isLaunching(runId: string): boolean {
    return this.launching.has(runId);
  }

  /** The runs between their creation and their first step. */
  launchingRuns(): string[] {
    return [...this.launching];
  }

  /** Runs `work` with the run marked as launching; the mark goes whatever `work` does. */
  async launch<T>(runId: string, work: () => Promise<T>): Promise<T> {
    this.launching.add(runId);
    try {
      return await work();
    } finally {
      this.launching.delete(runId);
    }
  }

  /** Starts `loop` for the run unless one already drives it; the driver goes when the loop stops. */
  drive(runId: string, loop: (signal: AbortSignal) => Promise<void>): void {
    if (this.drivers.has(runId)) return;
    const abort = new AbortController();
    const driver: Driver = { abort, stopped: Promise.resolve() };
    this.drivers.set(runId, driver);
    driver.stopped = loop(abort.signal).finally(() => {
      if (this.drivers.get(runId) === driver) this.drivers.delete(runId);
    });
  }

  /** Aborts the run's loop and everything it has in flight (model calls, webhooks, builtins). */
  abort(runId: string): void {
    this.drivers.get(runId)?.abort.abort();
  }

  /** Resolves once no loop of this instance drives the run (at once when none does). */
  stopped(runId: string): Promise<void> {
    return this.drivers.get(runId)?.stopped ?? Promise.resolve();
  }

  /** Forgets every driver (the storage is gone); their loops end on their aborted signals. */
  abortAll(): void {
    for (const driver of this.drivers.values()) driver.abort.abort();
    this.drivers.clear();
  }

  /** True while the terminal event of the run's ended stretch is not out yet. */
  isAnnouncing(runId: string): boolean {
    return this.announcing.has(runId);
  }

  /** Resolves once the terminal event of the run's ended stretch is out: its next transition may go on. */
  announced(runId: string): Promise<void> {
    return this.announcing.get(runId) ?? Promise.resolve();
  }

  /** Resolves once every ended stretch's terminal event is out (a new turn's run_started follows them). */
  async allAnnounced(): Promise<void> {
    while (this.announcing.size > 0) await Promise.all(this.announcing.values());
  }

  /** Holds the run's next transitions (`announced`) until `announcement` is done. */
  async holdUntilAnnounced(runId: string, announcement: Promise<void>): Promise<void> {
    this.announcing.set(runId, announcement);
    try {
      await announcement;
    } finally {
      if (this.announcing.get(runId) === announcement) this.announcing.delete(runId);
    }
  }

  /** True from the first instant of a delete, in this instance or one that was evicted during it. */
  isDeleting(): boolean {
    return this.deletion !== null || this.hasTombstone();
  }

  /** True when the storage holds a tombstone but no delete runs here: an evicted instance left it. */
  hasOrphanTombstone(): boolean {
    return this.deletion === null && this.hasTombstone();
  }

  /**
   * Runs a delete: the tombstone is stored before anything else and stays until the storage is
   * gone, so that an eviction or a failure in the middle (D1's rows may be gone already) leaves a
   * session that refuses work until an entry finishes the delete.
   */
  async deleteWith<T>(work: () => Promise<T>): Promise<T> {
    if (!this.hasTombstone()) this.storage.kv.put(TOMBSTONE_KEY, new Date().toISOString());
    const running = work();
    this.deletion = running;
    try {
      return await running;
    } finally {
      this.deletion = null;
    }
  }

  private hasTombstone(): boolean {
    return this.storage.kv.get(TOMBSTONE_KEY) !== undefined;
  }
}
