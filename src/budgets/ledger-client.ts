import type { TenantLedger } from "./tenant-ledger";

/** The binding of the tenants' ledgers (wrangler.toml `LEDGER`). */
export type LedgerEnv = { LEDGER: DurableObjectNamespace<TenantLedger> };

/** The tenant's ledger: one object per tenant, named by it. */
export const ledgerOf = (env: LedgerEnv, tenant: string) => env.LEDGER.get(env.LEDGER.idFromName(tenant));
