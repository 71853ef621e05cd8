import { bucketOf, type Period, resetsAt } from "./periods";
import type { BudgetScope } from "./spend";

/** A budget as the ledger stores it; `used_*` are its use since creation, read only by `total` budgets. */
export type BudgetRow = {
  id: string;
  scope: BudgetScope;
  /** The agent's or session's id; null for a tenant budget. */
  scope_id: string | null;
  period: Period;
  max_cost_usd: number | null;
  max_tokens: number | null;
  used_cost_usd: number;
  used_tokens: number;
  created_at: string;
  updated_at: string;
};

/** A budget as the API shows it (docs/budgets.md): its limits and its use in the current period. */
export type Budget = Omit<BudgetRow, "used_cost_usd" | "used_tokens"> & {
  used_cost_usd: number;
  used_tokens: number;
  /** When the current period ends (UTC); null for `total`. */
  resets_at: string | null;
};

/** What `POST /v1/budgets` creates (checked by the route). */
export type NewBudget = Pick<BudgetRow, "id" | "scope" | "scope_id" | "period" | "max_cost_usd" | "max_tokens">;

/** What `PATCH /v1/budgets/{id}` may change: a limit set, or removed with null. */
export type BudgetPatch = { max_cost_usd?: number | null; max_tokens?: number | null };

/** The counter a budget reads: its scope's `(scope, scope_id, bucket)` row, or (total) its own. */
export const counterOf = (row: BudgetRow, now: number) =>
  row.period === "total" ? null : { scope: row.scope, scope_id: row.scope_id ?? "", bucket: bucketOf(row.period, now) };

/** Whether a budget's use has reached one of its limits: the ledger then refuses the next model call. */
export const isSpent = (row: Pick<BudgetRow, "max_cost_usd" | "max_tokens">, used: { cost_usd: number; tokens: number }) =>
  (row.max_cost_usd !== null && used.cost_usd >= row.max_cost_usd) || (row.max_tokens !== null && used.tokens >= row.max_tokens);

/** The API's view of a budget with its current use. */
export const renderBudget = (row: BudgetRow, used: { cost_usd: number; tokens: number }, now: number): Budget => ({
  ...row,
  used_cost_usd: used.cost_usd,
  used_tokens: used.tokens,
  resets_at: resetsAt(row.period, now),
});
