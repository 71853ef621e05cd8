import { nowIso } from "../../core/ids";
import { notFound } from "../../core/errors";
import { ownedRun } from "../../db/runs";
import type { RunRecord } from "../../session";

/**
 * The run behind a response id of the tenant, unless the response was deleted: then 404, as an
 * unknown id (docs/responses-api.md, "Deleting a response").
 */
export async function ownedResponse(db: D1Database, tenant: string, responseId: string): Promise<RunRecord> {
  const [run, deleted] = await Promise.all([
    ownedRun(db, tenant, null, responseId),
    db.prepare("SELECT 1 AS deleted FROM deleted_responses WHERE tenant = ? AND run_id = ?").bind(tenant, responseId).first(),
  ]);
  if (deleted) throw notFound("Run", responseId);
  return run;
}

/** Hides the response of a run from `/v1/responses`; the run and its session's transcript stay. */
export async function markResponseDeleted(db: D1Database, tenant: string, run: Pick<RunRecord, "id" | "session_id">): Promise<void> {
  await db
    .prepare("INSERT INTO deleted_responses (tenant, run_id, session_id, deleted_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING")
    .bind(tenant, run.id, run.session_id, nowIso())
    .run();
}
