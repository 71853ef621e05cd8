import type { SessionStore } from "../store/session-store";

/**
 * The object's due times. A Durable Object has a single alarm, so every timer is kept in
 * storage and the alarm is set to the earliest of them.
 */
export type TimerName =
  /** Resumes a running run whose invocation died (eviction, deploy, crash). */
  | "watchdog"
  /** Retries a failed D1 mirror batch. */
  | "outbox"
  /** Ends a model call's backoff wait. */
  | "retry"
  /** Starts a pending background run whose queue message never came. */
  | "queue_fallback"
  /** Denies the tool calls a paused run has waited on past the agent's `approval_timeout_seconds`. */
  | "approval";

export class Timers {
  constructor(
    private readonly store: SessionStore,
    private readonly storage: DurableObjectStorage,
  ) {}

  set(name: TimerName, dueAt: number | null): void {
    this.store.setTimer(name, dueAt);
    this.sync();
  }

  /** When `name` is due, or null when it is not set. */
  due(name: TimerName): number | null {
    return this.store.timers().find((timer) => timer.name === name)?.due_at ?? null;
  }

  /** Removes and returns the timers that are due. */
  takeDue(now = Date.now()): TimerName[] {
    const due = this.store.timers().filter((t) => t.due_at <= now);
    for (const timer of due) this.store.setTimer(timer.name, null);
    return due.map((t) => t.name as TimerName);
  }

  /** Points the alarm at the earliest timer; the alarm re-arms only while there is work. */
  sync(): void {
    const first = this.store.timers()[0];
    if (first) void this.storage.setAlarm(first.due_at);
    else void this.storage.deleteAlarm();
  }
}
