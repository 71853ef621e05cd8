import type { Env } from "../env";
import { isUnfinished, renderRun, type Run, type RunRecord } from "../session";
import { callSession, unwrap } from "../session/client";

/**
 * A run as it is now: its D1 mirror once it has stopped; while it is queued or active, the session
 * object's state (the mirror may be a step behind), after waiting up to `waitMs` for it to stop.
 */
export async function currentRun(env: Env, tenant: string, stored: RunRecord, waitMs = 0): Promise<Run> {
  if (!isUnfinished(stored.status)) return renderRun(stored);
  const identity = { tenant, session_id: stored.session_id };
  const live = await callSession(
    env,
    tenant,
    stored.session_id,
    (stub) => (waitMs > 0 ? stub.waitForRun(identity, stored.id, waitMs) : stub.getRun(identity, stored.id)),
    { idempotent: true },
  );
  return unwrap(live).run;
}
