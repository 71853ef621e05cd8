/** A budget's period (docs/budgets.md): a UTC day, a UTC calendar month, or everything since the budget was created. */
export type Period = "day" | "month" | "total";

/** The UTC day of `ms`: `2026-12-04`; the key of a day's counters in the ledger. */
export const dayKey = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** The UTC month of `ms`: `2026-12`; the key of a month's counters in the ledger. */
export const monthKey = (ms: number): string => new Date(ms).toISOString().slice(0, 7);

/** The key of the counters a `day` or `month` budget reads at `ms`. */
export const bucketOf = (period: Exclude<Period, "total">, ms: number): string => (period === "day" ? dayKey(ms) : monthKey(ms));

/** When the period that holds `ms` ends (ISO, UTC): the next midnight, or the first of the next month; null for `total`. */
export function resetsAt(period: Period, ms: number): string | null {
  const d = new Date(ms);
  if (period === "day") return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1)).toISOString();
  if (period === "month") return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)).toISOString();
  return null;
}
