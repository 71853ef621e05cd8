import type { Period } from "./periods";

/** Whose use a budget caps: the whole tenant, one of its agents, or one of its sessions. */
export type BudgetScope = "tenant" | "agent" | "session";

/** What a model call is counted against: the tenant's ledger holds a counter for each of these scopes. */
export type SpendKeys = { agent_id: string; session_id: string | null };

/** One model call's use, as the session object reports it to its tenant's ledger. */
export type Spend = SpendKeys & {
  /** USD; 0 when the model's price is unknown (its tokens still count). */
  cost_usd: number;
  /** `total_tokens`: input plus output tokens. */
  tokens: number;
  /** When the call answered (epoch ms): the UTC day and month it is counted in. */
  at: number;
  /**
   * Set on a report the session object stored before sending (a call a budget watched): the
   * object sends it again after a crash, and the ledger counts each id once (ledger-store.ts).
   */
  id?: string;
};

/** The spent budget that refuses a model call. */
export type BudgetStop = { budget_id: string; scope: BudgetScope; period: Period; resets_at: string | null; message: string };

/**
 * The ledger's answer to "may the next model call be made?". `watched`: some budget applies to
 * the asker's agent or session (without one, its calls need not ask again for a while).
 */
export type Verdict = { ok: true; watched: boolean } | ({ ok: false } & BudgetStop);

/** Allowed, and asked again at the next call: the answer when the ledger could not be reached. */
export const ALLOWED: Verdict = { ok: true, watched: true };

/** Costs are kept to 1e-10 USD so that sums of many calls do not gather float noise. */
export const roundUsd = (usd: number) => Math.round(usd * 1e10) / 1e10;

/** The `details` of a `429 budget_exceeded` answer (docs/budgets.md). */
export const stopDetails = (stop: BudgetStop) => ({ budget_id: stop.budget_id, resets_at: stop.resets_at });

/** A stored report older than this is not sent again (session objects, spend-gate.ts): it was counted. */
export const REPORT_RESEND_MS = 86_400_000;

/** How long the ledger keeps the ids of counted reports: far longer than a report may be sent again. */
export const REPORT_IDS_KEPT_MS = 7 * REPORT_RESEND_MS;
