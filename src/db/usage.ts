import { and, asc, count, eq, gte, lt, lte, sql, type SQL } from "drizzle-orm";
import { database } from "./client";
import { runs, usageDaily } from "./schema";

/** One `usage_daily` row as `GET /v1/usage` shows it. */
export type UsageDay = {
  date: string;
  agent_id: string;
  runs: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost_usd: number | null;
};

/** The sum of one of the runs' metrics (`runs.body`, JSON); 0 when none has it. */
const metric = (name: string) => sql<number>`COALESCE(SUM(json_extract(${runs.body}, ${sql.raw(`'$.metrics.${name}'`)})), 0)`;

/**
 * Replaces every tenant's `usage_daily` rows of `date` with sums over the runs created in
 * [`start`, `end`) (ISO strings). One D1 batch, which D1 runs as a transaction: a reader sees
 * the old rows or the new ones, and running it again writes the same rows. SQL `SUM` skips
 * nulls, so `cost_usd` is the sum of the known costs, and null when no run had one.
 */
export async function replaceUsageDay(d1: D1Database, date: string, start: string, end: string): Promise<void> {
  const db = database(d1);
  // The selection follows the table's column order: drizzle inserts a SELECT into every column, in order.
  const sums = db
    .select({
      tenant: runs.tenant,
      date: sql<string>`${date}`.as("date"),
      agentId: runs.agentId,
      runs: count().as("runs"),
      inputTokens: metric("input_tokens").as("input_tokens"),
      outputTokens: metric("output_tokens").as("output_tokens"),
      cacheReadTokens: metric("cache_read_tokens").as("cache_read_tokens"),
      cacheWriteTokens: metric("cache_write_tokens").as("cache_write_tokens"),
      costUsd: sql<number | null>`ROUND(SUM(json_extract(${runs.body}, '$.metrics.cost_usd')), 10)`.as("cost_usd"),
    })
    .from(runs)
    .where(and(gte(runs.createdAt, start), lt(runs.createdAt, end)))
    .groupBy(runs.tenant, runs.agentId);
  await db.batch([db.delete(usageDaily).where(eq(usageDaily.date, date)), db.insert(usageDaily).select(sums)]);
}

export type UsageFilter = { from: string; to: string; agentId?: string };

/**
 * The tenant's daily rows from `from` to `to` (inclusive), by date then agent id; at most
 * `limit` rows (the caller asks for one more to know that there are more).
 */
export async function listUsage(d1: D1Database, tenant: string, filter: UsageFilter, limit: number): Promise<UsageDay[]> {
  const where: SQL[] = [eq(usageDaily.tenant, tenant), gte(usageDaily.date, filter.from), lte(usageDaily.date, filter.to)];
  if (filter.agentId !== undefined) where.push(eq(usageDaily.agentId, filter.agentId));
  const rows = await database(d1)
    .select()
    .from(usageDaily)
    .where(and(...where))
    .orderBy(asc(usageDaily.date), asc(usageDaily.agentId))
    .limit(limit)
    .all();
  return rows.map((r) => ({
    date: r.date,
    agent_id: r.agentId,
    runs: r.runs,
    input_tokens: r.inputTokens,
    output_tokens: r.outputTokens,
    cache_read_tokens: r.cacheReadTokens,
    cache_write_tokens: r.cacheWriteTokens,
    cost_usd: r.costUsd,
  }));
}
