import { errorMessage } from "../core/errors";
import { callSession } from "../session/client";
import { log } from "../core/log";
import { eventRetentionCutoff, positiveNumber } from "../core/settings";
import type { Env } from "../env";
import { rollUpRecentUsage } from "./usage-rollup";

/** Runs swept per Cron tick; the rest wait for the next one. */
const SWEEP_BATCH = 50;

/**
 * The backstop of recovery: runs that the mirror shows pending or running with no progress
 * for `STALE_RUN_SECONDS` are handed to their object, which resumes them (or ends them after
 * `MAX_RUN_SWEEPS` sweeps found them stuck). The object's own watchdog alarm usually acts first.
 */
export async function sweepStuckRuns(env: Env, now: Date): Promise<number> {
  const staleBefore = new Date(now.getTime() - positiveNumber(env.STALE_RUN_SECONDS, 300) * 1000).toISOString();
  const maxSweeps = positiveNumber(env.MAX_RUN_SWEEPS, 3);
  const { results } = await env.DB.prepare(
    "SELECT tenant, session_id, id FROM runs WHERE status IN ('pending', 'running') AND updated_at < ? ORDER BY updated_at LIMIT ?",
  )
    .bind(staleBefore, SWEEP_BATCH)
    .all<{ tenant: string; session_id: string; id: string }>();
  for (const run of results) {
    try {
      await callSession(env, run.tenant, run.session_id, (session) =>
        session.sweepRun({ tenant: run.tenant, session_id: run.session_id }, run.id, maxSweeps),
      );
    } catch (error) {
      log({ event: "unhandled_error", message: `sweep of ${run.id}: ${errorMessage(error)}` });
    }
  }
  return results.length;
}

/** Deletes stored events older than `EVENT_RETENTION_DAYS` and idempotency keys older than 24 h. */
export async function applyRetention(env: Env, now: Date): Promise<number> {
  const eventsBefore = eventRetentionCutoff(env, now);
  const keysBefore = new Date(now.getTime() - 86_400_000).toISOString();
  const [events] = await env.DB.batch([
    env.DB.prepare("DELETE FROM events WHERE created_at < ?").bind(eventsBefore),
    env.DB.prepare("DELETE FROM idempotency_keys WHERE created_at < ?").bind(keysBefore),
  ]);
  return events?.meta.changes ?? 0;
}

/** The Cron trigger: every maintenance job, each isolated from the others' failures. */
export async function runMaintenance(env: Env, now: Date): Promise<void> {
  let stale = 0;
  let deleted = 0;
  try {
    stale = await sweepStuckRuns(env, now);
  } catch (error) {
    log({ event: "unhandled_error", message: `sweep: ${errorMessage(error)}` });
  }
  try {
    deleted = await applyRetention(env, now);
  } catch (error) {
    log({ event: "unhandled_error", message: `retention: ${errorMessage(error)}` });
  }
  try {
    await rollUpRecentUsage(env.DB, now);
  } catch (error) {
    log({ event: "unhandled_error", message: `usage roll-up: ${errorMessage(error)}` });
  }
  log({ event: "sweep", stale_runs: stale, events_deleted: deleted });
}
