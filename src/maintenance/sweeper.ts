import { errorMessage } from "../core/errors";
import { deleteExpired } from "../db/retention";
import { staleRuns } from "../db/runs";
import { callSession } from "../session/client";
import { log } from "../core/log";
import { eventRetentionCutoff, positiveNumber } from "../core/settings";
import type { Env } from "../env";
import { rollUpRecentUsage } from "./usage-rollup";
import { sweepWebhookDeliveries } from "./webhook-sweep";

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
  const stale = await staleRuns(env.DB, staleBefore, SWEEP_BATCH);
  for (const run of stale) {
    try {
      await callSession(env, run.tenant, run.sessionId, (session) =>
        session.sweepRun({ tenant: run.tenant, session_id: run.sessionId }, run.id, maxSweeps),
      );
    } catch (error) {
      log({ event: "unhandled_error", message: `sweep of ${run.id}: ${errorMessage(error)}` });
    }
  }
  return stale.length;
}

/** Deletes stored events older than `EVENT_RETENTION_DAYS` and idempotency keys older than 24 h. */
export async function applyRetention(env: Env, now: Date): Promise<number> {
  const eventsBefore = eventRetentionCutoff(env, now);
  const keysBefore = new Date(now.getTime() - 86_400_000).toISOString();
  return deleteExpired(env.DB, eventsBefore, keysBefore);
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
    await sweepWebhookDeliveries(env, now);
  } catch (error) {
    log({ event: "unhandled_error", message: `webhook sweep: ${errorMessage(error)}` });
  }
  try {
    await rollUpRecentUsage(env.DB, now);
  } catch (error) {
    log({ event: "unhandled_error", message: `usage roll-up: ${errorMessage(error)}` });
  }
  log({ event: "sweep", stale_runs: stale, events_deleted: deleted });
}
