import { nowIso } from "../../core/ids";
import { notFound } from "../../core/errors";
import { insertDeletedResponse, isResponseDeleted } from "../../db/deleted-responses";
import { ownedRun } from "../../db/runs";
import type { RunRecord } from "../../session";

/**
 * The run behind a response id of the tenant, unless the response was deleted: then 404, as an
 * unknown id (docs/responses-api.md, "Deleting a response").
 */
export async function ownedResponse(db: D1Database, tenant: string, responseId: string): Promise<RunRecord> {
  const [run, deleted] = await Promise.all([ownedRun(db, tenant, null, responseId), isResponseDeleted(db, tenant, responseId)]);
  if (deleted) throw notFound("Run", responseId);
  return run;
}

/** Hides the response of a run from `/v1/responses`; the run and its session's transcript stay. */
export async function markResponseDeleted(db: D1Database, tenant: string, run: Pick<RunRecord, "id" | "session_id">): Promise<void> {
  await insertDeletedResponse(db, { tenant, runId: run.id, sessionId: run.session_id, deletedAt: nowIso() });
}
