/**
 * Spend budgets (docs/budgets.md): the tenant ledger (a Durable Object, one per tenant) that counts
 * every model call and checks budgets, the budget and period model, and how callers reach a ledger.
 */
export * from "./budget";
export * from "./periods";
export * from "./spend";
export { ledgerOf, type LedgerEnv } from "./ledger-client";
export { MAX_BUDGETS, TenantLedger } from "./tenant-ledger";
