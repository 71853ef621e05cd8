import { and, desc, eq, inArray, lt, or, sql, type SQL } from "drizzle-orm";
import { notFound } from "../core/errors";
import type { Cursor } from "../core/cursor";
import { parseRunRow, type RunRecord } from "../run-model";
import { openRunRow } from "../run-model/compact-run-body";
import { database } from "./client";
import { runInputs, runs } from "./schema";

/**
 * Run bodies are written only by the Session object, from a RunRecord, with the write-once values
 * in `run_inputs` (run-inputs.ts), and checked when read back (run-record-schema.ts).
 */
const parse = async (row: { body: string; once: string | null }) => parseRunRow(await openRunRow(row), "D1");
const columns = { body: runs.body, once: runInputs.body };

/** A run of the tenant's agent (of any of its agents when `agentId` is null), or null (unknown, foreign, or of another agent). */
export async function findRun(d1: D1Database, tenant: string, agentId: string | null, runId: string): Promise<RunRecord | null> {
  const row = await database(d1)
    .select(columns)
    .from(runs)
    .leftJoin(runInputs, eq(runInputs.id, runs.id))
    .where(and(eq(runs.tenant, tenant), agentId === null ? undefined : eq(runs.agentId, agentId), eq(runs.id, runId)))
    .get();
  return row ? parse(row) : null;
}

/** A run of the tenant's agent (any agent when `agentId` is null), or a 404 as if it did not exist. */
export async function ownedRun(d1: D1Database, tenant: string, agentId: string | null, runId: string): Promise<RunRecord> {
  const run = await findRun(d1, tenant, agentId, runId);
  if (!run) throw notFound("Run", runId);
  return run;
}

/**
 * The tenant's paused run that waits for the result of call `callId`, or null: a client that
 * resends its history with the results (no `previous_response_id`) continues it. Call ids are
 * the providers' and unique (docs/responses-api.md).
 */
export async function pausedRunWaitingFor(d1: D1Database, tenant: string, agentId: string, callId: string): Promise<RunRecord | null> {
  const row = await database(d1)
    .select(columns)
    .from(runs)
    .leftJoin(runInputs, eq(runInputs.id, runs.id))
    .where(
      and(
        eq(runs.status, "paused"),
        eq(runs.tenant, tenant),
        eq(runs.agentId, agentId),
        sql`EXISTS (SELECT 1 FROM json_each(${runs.body}, '$.required_actions') WHERE json_extract(value, '$.tool_call_id') = ${callId})`,
      ),
    )
    .get();
  return row ? parse(row) : null;
}

export type RunFilter = { agentId?: string; sessionId?: string; sessionIds?: string[]; status?: string };

/** Runs newest first, `limit + 1` of them so the caller knows whether a next page exists. */
export async function listRuns(d1: D1Database, tenant: string, filter: RunFilter, after: Cursor | null, limit: number) {
  const where: (SQL | undefined)[] = [eq(runs.tenant, tenant)];
  if (filter.agentId) where.push(eq(runs.agentId, filter.agentId));
  if (filter.sessionId) where.push(eq(runs.sessionId, filter.sessionId));
  if (filter.status) where.push(eq(runs.status, filter.status));
  if (after) where.push(or(lt(runs.createdAt, after.createdAt), and(eq(runs.createdAt, after.createdAt), lt(runs.id, after.id))));
  const rows = await database(d1)
    .select({ ...columns, createdAt: runs.createdAt, id: runs.id })
    .from(runs)
    .leftJoin(runInputs, eq(runInputs.id, runs.id))
    .where(and(...where))
    .orderBy(desc(runs.createdAt), desc(runs.id))
    .limit(limit + 1)
    .all();
  return Promise.all(rows.map(async (r) => ({ createdAt: r.createdAt, id: r.id, run: await parse(r) })));
}

/**
 * Up to `limit` runs the mirror shows pending or running and not updated since `staleBefore`,
 * least recently updated first (the stuck-run sweep, maintenance/sweeper.ts).
 */
export async function staleRuns(d1: D1Database, staleBefore: string, limit: number) {
  return database(d1)
    .select({ tenant: runs.tenant, sessionId: runs.sessionId, id: runs.id })
    .from(runs)
    .where(and(inArray(runs.status, ["pending", "running"]), lt(runs.updatedAt, staleBefore)))
    .orderBy(runs.updatedAt)
    .limit(limit)
    .all();
}
