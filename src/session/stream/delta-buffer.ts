/** Streamed deltas stored together at most this often (a display frame is ≈ 16 ms). */
export const DELTA_WINDOW_MS = 15;

/**
 * Coalesces the writes of a streamed answer's deltas (`content_delta`, `reasoning_delta`). Each
 * emitted event is stored before anyone sees it, and the writes made between two awaits commit
 * together; a model stream hands over its deltas one network read at a time, so each delta
 * would be a commit of its own (16 for a 50-word answer read in one burst). The first delta
 * after a quiet window is written at once (the time to first token is untouched); the ones that
 * follow within `windowMs` wait in memory and are written together when the window ends, or
 * at once before any other event (which must follow them in seq order).
 *
 * Nothing is lost: a held delta has not been seen by anyone, and an object that dies holding
 * one redoes the model call it came from (the transcript has no answer for that step yet).
 */
export class DeltaBuffer {
  private held: (() => void)[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  private lastWriteAt = Number.NEGATIVE_INFINITY;

  /**
   * `around` runs the writes of held deltas released together (SessionCore stores them as one row
   * of the event log: event-packs.ts).
   */
  constructor(
    private readonly windowMs = DELTA_WINDOW_MS,
    private readonly around: (writeAll: () => void) => void = (writeAll) => writeAll(),
  ) {}

  /**
   * Runs `write` now, or holds it until the window ends or `release()`. `watched`: someone
   * follows the run live (an SSE stream, a WebSocket); when nobody does, no first token waits
   * on the write, and even the first delta is held for a window.
   */
  add(write: () => void, watched = true): void {
    const now = Date.now();
    if (watched && this.held.length === 0 && now - this.lastWriteAt >= this.windowMs) {
      this.lastWriteAt = now;
      write();
      return;
    }
    this.held.push(write);
    if (this.timer === null) {
      const due = watched ? this.lastWriteAt + this.windowMs : now + this.windowMs;
      this.timer = setTimeout(() => this.release(), Math.max(0, due - now));
    }
  }

  /** Writes every held delta now, in the order they came. */
  release(): void {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.held.length === 0) return;
    this.lastWriteAt = Date.now();
    const held = this.held.splice(0);
    this.around(() => {
      for (const write of held) write();
    });
  }
}
