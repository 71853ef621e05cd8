import type { RunStatus } from "../../run-model/run-record";

/**
 * Which status a run may go to from which (docs/architecture.md, "A run's life"). A new run is
 * `queued` (behind a busy session's turn), `pending` (background) or `running`; `paused` waits
 * for client tool results; the last three are final. RunLifecycle (run-lifecycle.ts) moves runs, and only through `move`.
 */
export const RUN_TRANSITIONS: Readonly<Record<RunStatus | "new", readonly RunStatus[]>> = {
  new: ["queued", "pending", "running"],
  queued: ["running", "cancelled"],
  pending: ["running", "cancelled", "error"],
  running: ["paused", "completed", "error", "cancelled"],
  paused: ["running", "cancelled"],
  completed: [],
  error: [],
  cancelled: [],
};

/** A move the table does not allow: a bug of the caller, never a client's error. */
export class IllegalTransitionError extends Error {
  constructor(
    readonly from: RunStatus | "new",
    readonly to: RunStatus,
  ) {
    super(`A run cannot go from ${from} to ${to}`);
    this.name = "IllegalTransitionError";
  }
}

export const canMove = (from: RunStatus | "new", to: RunStatus) => RUN_TRANSITIONS[from].includes(to);

/** Sets the run's status to `to`, or throws when the table does not allow the move. */
export function move(run: { status: RunStatus }, to: RunStatus): void {
  if (!canMove(run.status, to)) throw new IllegalTransitionError(run.status, to);
  run.status = to;
}
