import type { RunRecord, Steer } from "../../run-model/run-record";
import type { SessionStore } from "../store/session-store";
import type { SessionCore } from "./session-core";

/** A steer's id, from the run id the Worker planned for the request (a retried request finds it again). */
export const steerIdOf = (plannedRunId: string) => plannedRunId.replace(/^run_/, "str_");

/** The id of the queued run a steer becomes when its run stops before its model saw it. */
export const queuedRunIdOf = (steerId: string) => steerId.replace(/^str_/, "run_");

/** Steers are written while the loop holds an older copy of the run: a save takes them from storage. */
export function withStoredSteers(store: SessionStore, run: RunRecord): void {
  const stored = store.getRun(run.id);
  if (!stored) return;
  run.steers = stored.steers ?? [];
  run.steered = stored.steered ?? [];
}

/** Adds a steer to the run's pending ones, in one commit. */
export function addSteer(core: SessionCore, run: RunRecord, steer: Steer): void {
  withStoredSteers(core.store, run);
  run.steers = [...(run.steers ?? []), steer];
  core.commit(() => core.saveRun(run));
}

/**
 * The loop, before a model call: the run's pending steers join the transcript as user messages,
 * in one commit. `run` is the loop's copy read at the top of this step, with no await since.
 */
export function takeSteers(core: SessionCore, run: RunRecord): boolean {
  const pending = run.steers ?? [];
  if (pending.length === 0) return false;
  core.commit(() => {
    const messages = pending.map((steer) => core.appendMessage(run, "user", steer.input));
    run.steered = [...(run.steered ?? []), ...pending.map((steer) => steer.id)];
    run.steers = [];
    return [...messages, ...core.saveRun(run)];
  });
  return true;
}
