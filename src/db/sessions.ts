import { openRunBody } from "../run-model/compact-run-body";
import { and, desc, eq, inArray, lt, or, type SQL } from "drizzle-orm";
import type { Cursor } from "../core/cursor";
import type { RunRecord } from "../run-model";
import { database } from "./client";
import { runs, sessions } from "./schema";
import { parseStored } from "../core/json-depth";

export async function findSession(d1: D1Database, tenant: string, id: string) {
  return database(d1)
    .select()
    .from(sessions)
    .where(and(eq(sessions.tenant, tenant), eq(sessions.id, id)))
    .get();
}

/** Sessions newest first (`limit + 1` rows), each with its runs from the mirror. */
export async function listSessions(d1: D1Database, tenant: string, agentId: string | undefined, after: Cursor | null, limit: number) {
  const db = database(d1);
  const where: (SQL | undefined)[] = [eq(sessions.tenant, tenant)];
  if (agentId) where.push(eq(sessions.agentId, agentId));
  if (after)
    where.push(or(lt(sessions.createdAt, after.createdAt), and(eq(sessions.createdAt, after.createdAt), lt(sessions.id, after.id))));
  const rows = await db
    .select()
    .from(sessions)
    .where(and(...where))
    .orderBy(desc(sessions.createdAt), desc(sessions.id))
    .limit(limit + 1)
    .all();
  const ids = rows.map((r) => r.id);
  const runRows =
    ids.length === 0
      ? []
      : await db
          .select({ sessionId: runs.sessionId, body: runs.body })
          .from(runs)
          .where(and(eq(runs.tenant, tenant), inArray(runs.sessionId, ids)))
          .orderBy(runs.createdAt, runs.id)
          .all();
  const runsOf = new Map<string, RunRecord[]>();
  for (const r of runRows) {
    // Run bodies are written only by the Session object, from a RunRecord.
    const list = runsOf.get(r.sessionId) ?? [];
    list.push(parseStored<RunRecord>(await openRunBody(r.body)));
    runsOf.set(r.sessionId, list);
  }
  return rows.map((row) => ({ ...row, runs: runsOf.get(row.id) ?? [] }));
}
