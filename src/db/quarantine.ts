import { count, desc } from "drizzle-orm";
import { database } from "./client";
import { mirrorQuarantine } from "./schema";

export type QuarantineRow = typeof mirrorQuarantine.$inferSelect;

/** The newest `limit` quarantine records of every tenant (operator view). */
export async function listQuarantined(d1: D1Database, limit: number): Promise<QuarantineRow[]> {
  return database(d1).select().from(mirrorQuarantine).orderBy(desc(mirrorQuarantine.at)).limit(limit).all();
}

/** How many quarantine records D1 holds. */
export async function countQuarantined(d1: D1Database): Promise<number> {
  return (await database(d1).select({ n: count() }).from(mirrorQuarantine).get())?.n ?? 0;
}
