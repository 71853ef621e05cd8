import { type BudgetPatch, type BudgetRow, counterOf, type NewBudget } from "./budget";
import { dayKey, monthKey } from "./periods";
import { REPORT_IDS_KEPT_MS, roundUsd, type Spend } from "./spend";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS budgets (
  id TEXT PRIMARY KEY, scope TEXT NOT NULL, scope_id TEXT, period TEXT NOT NULL,
  max_cost_usd REAL, max_tokens INTEGER, used_cost_usd REAL NOT NULL DEFAULT 0, used_tokens INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS counters (
  scope TEXT NOT NULL, scope_id TEXT NOT NULL, bucket TEXT NOT NULL, cost_usd REAL NOT NULL, tokens INTEGER NOT NULL,
  PRIMARY KEY (scope, scope_id, bucket)
);
CREATE TABLE IF NOT EXISTS counted_reports (id TEXT PRIMARY KEY, at INTEGER NOT NULL);`;

const ADD = `INSERT INTO counters (scope, scope_id, bucket, cost_usd, tokens) VALUES (?, ?, ?, ?, ?)
  ON CONFLICT (scope, scope_id, bucket) DO UPDATE SET cost_usd = ROUND(cost_usd + excluded.cost_usd, 10), tokens = tokens + excluded.tokens`;

type Used = { cost_usd: number; tokens: number };
const NOTHING: Used = { cost_usd: 0, tokens: 0 };

/**
 * A tenant ledger's SQLite (tenant-ledger.ts): its budgets, and its counters of use per scope
 * (`tenant` with scope_id "", each agent, each session) and per UTC day and month, written for
 * every model call from the first one on, budgets or not: a `day` or `month` budget created
 * later reads the use of its whole period. Budgets are also held in memory (the check before
 * each model call reads no table when a tenant has none); SQLite calls are synchronous.
 */
export class LedgerStore {
  private cached: BudgetRow[] | null = null;
  private prunedOn: string | null = null;

  constructor(private readonly sql: SqlStorage) {
    sql.exec(SCHEMA);
  }

  budgets(): BudgetRow[] {
    this.cached ??= this.sql.exec<BudgetRow>("SELECT * FROM budgets ORDER BY created_at DESC, id DESC").toArray();
    return this.cached;
  }

  budget(id: string): BudgetRow | null {
    return this.budgets().find((b) => b.id === id) ?? null;
  }

  insert(budget: NewBudget, now: string): BudgetRow {
    const row: BudgetRow = { ...budget, used_cost_usd: 0, used_tokens: 0, created_at: now, updated_at: now };
    this.sql.exec(
      "INSERT INTO budgets (id, scope, scope_id, period, max_cost_usd, max_tokens, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      row.id,
      row.scope,
      row.scope_id,
      row.period,
      row.max_cost_usd,
      row.max_tokens,
      now,
      now,
    );
    this.cached = null;
    return row;
  }

  update(row: BudgetRow, patch: BudgetPatch, now: string): BudgetRow {
    const next = { ...row, ...patch, updated_at: now };
    this.sql.exec(
      "UPDATE budgets SET max_cost_usd = ?, max_tokens = ?, updated_at = ? WHERE id = ?",
      next.max_cost_usd,
      next.max_tokens,
      now,
      row.id,
    );
    this.cached = null;
    return next;
  }

  delete(id: string): boolean {
    const deleted = this.sql.exec("DELETE FROM budgets WHERE id = ?", id).rowsWritten > 0;
    this.cached = null;
    return deleted;
  }

  /**
   * Counts model calls: their scopes' day and month counters, and the `total` budgets they fall
   * under. Calls reported together are summed first, so that each counter and budget is written
   * once for them (a row written each). A report with an id is counted once: the session object
   * sends its stored reports again after a crash, and some of them may have been counted before.
   */
  add(spends: Spend[]): void {
    const counters = new Map<string, { scope: string; id: string; bucket: string } & Used>();
    const totals = new Map<string, { budget: BudgetRow } & Used>();
    for (const spend of spends) {
      if (spend.id !== undefined && !this.firstTime(spend.id, spend.at)) continue;
      const scopes: [string, string][] = [
        ["tenant", ""],
        ["agent", spend.agent_id],
      ];
      if (spend.session_id !== null) scopes.push(["session", spend.session_id]);
      const cost = roundUsd(spend.cost_usd);
      for (const bucket of [dayKey(spend.at), monthKey(spend.at)]) {
        for (const [scope, id] of scopes) {
          const key = `${scope}\u0000${id}\u0000${bucket}`;
          const counter = counters.get(key) ?? { scope, id, bucket, cost_usd: 0, tokens: 0 };
          counter.cost_usd = roundUsd(counter.cost_usd + cost);
          counter.tokens += spend.tokens;
          counters.set(key, counter);
        }
      }
      for (const budget of this.budgets().filter((b) => b.period === "total" && appliesTo(b, spend))) {
        const total = totals.get(budget.id) ?? { budget, cost_usd: 0, tokens: 0 };
        total.cost_usd = roundUsd(total.cost_usd + cost);
        total.tokens += spend.tokens;
        totals.set(budget.id, total);
      }
    }
    for (const c of counters.values()) this.sql.exec(ADD, c.scope, c.id, c.bucket, c.cost_usd, c.tokens);
    for (const { budget, cost_usd, tokens } of totals.values()) {
      budget.used_cost_usd = roundUsd(budget.used_cost_usd + cost_usd);
      budget.used_tokens += tokens;
      this.sql.exec(
        "UPDATE budgets SET used_cost_usd = ?, used_tokens = ? WHERE id = ?",
        budget.used_cost_usd,
        budget.used_tokens,
        budget.id,
      );
    }
    const latest = spends.reduce((at, spend) => Math.max(at, spend.at), 0);
    if (spends.length > 0) this.prune(latest);
  }

  /** Records a report's id; false when it was counted before. */
  private firstTime(id: string, at: number): boolean {
    return this.sql.exec("INSERT OR IGNORE INTO counted_reports (id, at) VALUES (?, ?)", id, at).rowsWritten > 0;
  }

  /** A budget's use in its period at `now`. */
  used(row: BudgetRow, now: number): Used {
    const counter = counterOf(row, now);
    if (counter === null) return { cost_usd: row.used_cost_usd, tokens: row.used_tokens };
    const found = this.sql
      .exec<Used>(
        "SELECT cost_usd, tokens FROM counters WHERE scope = ? AND scope_id = ? AND bucket = ?",
        counter.scope,
        counter.scope_id,
        counter.bucket,
      )
      .toArray()[0];
    return found ?? NOTHING;
  }

  /** Once a day: counters no budget can read any more (days before yesterday, months before the last). */
  private prune(now: number): void {
    const today = dayKey(now);
    if (this.prunedOn === today) return;
    this.prunedOn = today;
    const lastMonth = new Date(now);
    lastMonth.setUTCDate(1);
    lastMonth.setUTCMonth(lastMonth.getUTCMonth() - 1);
    this.sql.exec(
      "DELETE FROM counters WHERE (length(bucket) = 10 AND bucket < ?) OR (length(bucket) = 7 AND bucket < ?)",
      dayKey(now - 86_400_000),
      monthKey(lastMonth.getTime()),
    );
    this.sql.exec("DELETE FROM counted_reports WHERE at < ?", now - REPORT_IDS_KEPT_MS);
  }
}

/** Whether a budget caps a call of `keys`' agent and session. */
export const appliesTo = (b: BudgetRow, keys: { agent_id: string; session_id: string | null }) =>
  b.scope === "tenant" ||
  (b.scope === "agent" && b.scope_id === keys.agent_id) ||
  (b.scope === "session" && b.scope_id === keys.session_id);
