import type { OnBusy } from "../../agents";
import type { RunRecord } from "../../run-model/run-record";
import type { SessionStore } from "../store/session-store";
import type { NewRun } from "./new-run";
import { fail, type Refusal } from "./session-core";

/**
 * What a turn on a busy session does (docs/runs.md, Busy sessions): reads of the session's state
 * that RunLifecycle (run-lifecycle.ts) decides on. None of them changes anything.
 */

/** The run that holds the session: its active run, or the first in its queue (between a release and the hand-over). */
const holderOf = (store: SessionStore) => store.activeRun() ?? store.queuedRuns()[0];

/** The refusal of a new turn while a run holds the session or waits in its queue; null when it is free. */
export function busyRefusal(store: SessionStore): Refusal | null {
  const holder = holderOf(store);
  if (!holder) return null;
  return fail("session_busy", `Session ${holder.session_id} has a ${holder.status} run`, {
    session_id: holder.session_id,
    active_run_id: holder.id,
    active_status: holder.status,
  });
}

/**
 * The turn's `on_busy`, else the agent's as the run holding the session has it (its agent
 * version: so the object can answer before the Worker reads the agent), else `reject`.
 */
export const onBusyOf = (store: SessionStore, requested: OnBusy | undefined): OnBusy =>
  requested ?? holderOf(store)?.agent.on_busy ?? "reject";

/** The active run a plain turn (not a branch) with one of `policies` acts on, or null. */
export function activeRunFor(store: SessionStore, spec: NewRun, policies: OnBusy[]): RunRecord | null {
  if (spec.parent_run_id !== null) return null;
  const active = store.activeRun();
  return active && policies.includes(onBusyOf(store, spec.on_busy)) ? active : null;
}
