import { meterOn, meterSql } from "../core/storage-meter";
import { DurableObject } from "cloudflare:workers";
import type { Cursor } from "../core/cursor";
import { nowIso } from "../core/ids";
import { type Budget, type BudgetPatch, type BudgetRow, isSpent, type NewBudget, renderBudget } from "./budget";
import { appliesTo, LedgerStore } from "./ledger-store";
import { resetsAt } from "./periods";
import { ALLOWED, type Spend, type SpendKeys, type Verdict } from "./spend";

/** Budgets one tenant may hold: the check before each model call reads each one that applies. */
export const MAX_BUDGETS = 100;

/**
 * One tenant's spend ledger (docs/budgets.md): the one place its use is counted and its budgets
 * are kept and checked, named by the tenant (`LEDGER.idFromName(tenant)`). A Durable Object runs
 * one request at a time between awaits, and every method here is synchronous SQLite work, so a
 * report and the check that follows it are never interleaved with another run's: that is what
 * bounds the overshoot of parallel runs (one model call per run in flight). Budgets live only
 * here: a new one binds the very next check.
 */
export class TenantLedger extends DurableObject<{ STORAGE_METER?: string }> {
  private readonly store: LedgerStore;

  constructor(ctx: DurableObjectState, env: { STORAGE_METER?: string }) {
    super(ctx, env);
    this.store = new LedgerStore(meterOn(env) ? meterSql(ctx.storage.sql) : ctx.storage.sql);
  }

  /**
   * Counts `spends` (model calls that answered), then answers whether a call of `ask`'s agent
   * and session may be made now: refused while any budget that applies has reached a limit.
   */
  settle(spends: Spend[], ask: SpendKeys | null): Verdict {
    this.store.add(spends);
    return ask === null ? ALLOWED : this.verdict(ask, Date.now());
  }

  createBudget(budget: NewBudget): { budget: Budget } | { problem: string } {
    const known = this.store.budget(budget.id);
    if (known) return { budget: this.render(known) };
    if (this.store.budgets().length >= MAX_BUDGETS) return { problem: `a tenant holds at most ${MAX_BUDGETS} budgets` };
    return { budget: this.render(this.store.insert(budget, nowIso())) };
  }

  /** Newest first, `limit` after `after`. */
  listBudgets(limit: number, after: Cursor | null): Budget[] {
    const rows = this.store
      .budgets()
      .filter((b) => after === null || b.created_at < after.createdAt || (b.created_at === after.createdAt && b.id < after.id));
    return rows.slice(0, limit).map((b) => this.render(b));
  }

  getBudget(id: string): Budget | null {
    const row = this.store.budget(id);
    return row ? this.render(row) : null;
  }

  /** The changed budget; null when there is none; a problem when it would cap nothing. */
  updateBudget(id: string, patch: BudgetPatch): { budget: Budget } | { problem: string } | null {
    const row = this.store.budget(id);
    if (!row) return null;
    const next = { ...row, ...patch };
    if (next.max_cost_usd === null && next.max_tokens === null) return { problem: "a budget keeps max_cost_usd, max_tokens or both" };
    return { budget: this.render(this.store.update(row, patch, nowIso())) };
  }

  deleteBudget(id: string): boolean {
    return this.store.delete(id);
  }

  private render(row: BudgetRow): Budget {
    const now = Date.now();
    return renderBudget(row, this.store.used(row, now), now);
  }

  /** The spent budget that applies to `keys` and resets last (a `total` one never does), or allowed. */
  private verdict(keys: SpendKeys, now: number): Verdict {
    let stop: BudgetRow | null = null;
    let watched = false;
    for (const b of this.store.budgets()) {
      if (!appliesTo(b, keys)) continue;
      watched = true;
      if (!isSpent(b, this.store.used(b, now))) continue;
      if (stop === null || resetRank(b, now) > resetRank(stop, now)) stop = b;
    }
    if (stop === null) return { ok: true, watched };
    const used = this.store.used(stop, now);
    const limits = [
      stop.max_cost_usd !== null ? `$${used.cost_usd} of $${stop.max_cost_usd}` : null,
      stop.max_tokens !== null ? `${used.tokens} of ${stop.max_tokens} tokens` : null,
    ].filter((s) => s !== null);
    const where = stop.scope === "tenant" ? "the tenant" : `${stop.scope} ${stop.scope_id}`;
    return {
      ok: false,
      budget_id: stop.id,
      scope: stop.scope,
      period: stop.period,
      resets_at: resetsAt(stop.period, now),
      message: `Budget ${stop.id} (${stop.period}, ${where}) is spent: ${limits.join(", ")}`,
    };
  }
}

const resetRank = (b: BudgetRow, now: number) => {
  const at = resetsAt(b.period, now);
  return at === null ? Number.POSITIVE_INFINITY : Date.parse(at);
};
