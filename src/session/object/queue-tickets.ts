import { newRunRecord, type RunRecord, type Steer } from "../../run-model/run-record";
import type { SessionStore } from "../store/session-store";
import { queuedRunIdOf } from "./steers";

/**
 * A session's queue is kept in order by tickets (`RunRecord.queued`) that only grow: the last
 * one handed out is in the object's meta (`queue_ticket`).
 */

/** The ticket of a run joining the end of the queue. */
export const nextTicket = (store: SessionStore): number => Number(store.getMeta("queue_ticket") ?? "0") + 1;

/** A ticket before every queued run's: the front of the queue. */
export const frontTicket = (store: SessionStore): number => store.queuedRuns()[0]?.queued ?? nextTicket(store);

/** Records that `ticket` was handed out (call it inside the commit that stores its run). */
export function takeTicket(store: SessionStore, ticket: number): void {
  store.setMeta("queue_ticket", String(Math.max(ticket, Number(store.getMeta("queue_ticket") ?? "0"))));
}

/** A steer that reached no model, as a queued run of its own with `ticket` (store it, and take the ticket, in one commit). */
export function queuedRunOf(from: RunRecord, steer: Steer, ticket: number): RunRecord {
  const run = newRunRecord({
    id: queuedRunIdOf(steer.id),
    agent: from.agent,
    session_id: from.session_id,
    status: "queued",
    input: steer.input,
    parent_run_id: null,
    forked_from_checkpoint: null,
    metadata: {},
    created_at: steer.created_at,
    started_at: null,
    output_schema: from.agent.output_schema ?? null,
    base: { parent: null, until: null },
  });
  run.queued = ticket;
  if (from.caller) run.caller = from.caller;
  return run;
}
