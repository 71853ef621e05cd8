import { and, asc, eq, gte, lte, type SQL } from "drizzle-orm";
import { database } from "./client";
import { usageDaily } from "./schema";

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

const metric = (name: string) => `COALESCE(SUM(json_extract(body, '$.metrics.${name}')), 0)`;

/**
 * Replaces every tenant's `usage_daily` rows of `date` with sums over the runs created in
 * [`start`, `end`) (ISO strings). One D1 batch, which D1 runs as a transaction: a reader sees
 * the old rows or the new ones, and running it again writes the same rows. SQL `SUM` skips
 * nulls, so `cost_usd` is the sum of the known costs, and null when no run had one.
 */
export async function replaceUsageDay(d1: D1Database, date: string, start: string, end: string): Promise<void> {
  await d1.batch([
    d1.prepare("DELETE FROM usage_daily WHERE date = ?").bind(date),
    d1
      .prepare(
        `INSERT INTO usage_daily
           (tenant, date, agent_id, runs, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd)
         SELECT tenant, ?, agent_id, COUNT(*), ${metric("input_tokens")}, ${metric("output_tokens")},
                ${metric("cache_read_tokens")}, ${metric("cache_write_tokens")},
                ROUND(SUM(json_extract(body, '$.metrics.cost_usd')), 10)
         FROM runs
         WHERE created_at >= ? AND created_at < ?
         GROUP BY tenant, agent_id`,
      )
      .bind(date, start, end),
  ]);
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
