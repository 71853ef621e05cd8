import { z } from "zod";
import { replaceUsageDay } from "../db/usage";

const DAY_MS = 86_400_000;
const calendarDate = z.iso.date();

/** The UTC calendar date (YYYY-MM-DD) of an instant. */
export const utcDate = (at: Date): string => at.toISOString().slice(0, 10);

/** The date `days` after (or before, when negative) a YYYY-MM-DD date. */
export const addDays = (date: string, days: number): string => utcDate(new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS));

/**
 * Recomputes the `usage_daily` rows of one UTC day from the D1 mirror's runs: the runs
 * created that day, grouped by tenant and agent (count, token sums, sum of known costs).
 * Idempotent: recomputing replaces the day's rows, so a run that used more tokens since the
 * last roll-up is counted with its new totals, and a Cron retry writes the same rows.
 */
export async function rollUpUsage(db: D1Database, date: string): Promise<void> {
  if (!calendarDate.safeParse(date).success) throw new RangeError(`rollUpUsage: ${date} is not a YYYY-MM-DD date`);
  // Run `created_at` values are ISO strings in UTC ("2025-06-01T12:00:00.000Z"), so the
  // day is the string range [date, next date).
  await replaceUsageDay(db, date, date, addDays(date, 1));
}

/**
 * What the Cron trigger runs: yesterday and today (UTC) of `now`, so the runs that were still
 * going at the previous roll-up, or that crossed midnight, end up with their final totals.
 */
export async function rollUpRecentUsage(db: D1Database, now: Date): Promise<void> {
  const today = utcDate(now);
  await rollUpUsage(db, addDays(today, -1));
  await rollUpUsage(db, today);
}
