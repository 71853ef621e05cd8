import { MCP_OAUTH_CREDENTIAL } from "../credentials";
import { credentialsKey, decryptSecret, encryptSecret, type CredentialSecret } from "../credentials/crypto";
import { findCredentialRow, updateCredentialSecret } from "../db/credentials";
import { oauthStateSchema, type OAuthState } from "./oauth-state";

/** What reading and storing an mcp_oauth credential's OAuth state needs. */
export type OAuthStoreEnv = { DB: D1Database; CREDENTIALS_KEY?: string };

/** An mcp_oauth credential's stored OAuth state, with the rest of its secret and the ciphertext it was read from. */
export type StoredOAuth = { secret: CredentialSecret; state: OAuthState; ciphertext: string };

/** Tries of a change that another writer's change got in before. */
const MAX_ATTEMPTS = 3;

/**
 * The credential's OAuth state as stored in D1 (never an isolate's cached copy); null when it is
 * not an mcp_oauth credential of the tenant. Throws CredentialError without a usable CREDENTIALS_KEY.
 */
export async function readOAuthState(env: OAuthStoreEnv, tenant: string, id: string): Promise<StoredOAuth | null> {
  const row = await findCredentialRow(env.DB, tenant, id);
  if (!row || row.provider !== MCP_OAUTH_CREDENTIAL) return null;
  const secret = await decryptSecret(await credentialsKey(env.CREDENTIALS_KEY), tenant, id, row.ciphertext);
  const parsed = oauthStateSchema.safeParse(secret.oauth);
  return parsed.success ? { secret, state: parsed.data, ciphertext: row.ciphertext } : null;
}

/**
 * Applies `change` to the stored state and stores the result encrypted, only if no one wrote the
 * credential since it was read (a refresh in the credential's object, a callback, a new
 * authorization); else reads it again and applies `change` to that. `change` answers null to leave
 * it as it is. Answers the state now stored, or null when there is no such credential.
 */
export async function changeOAuthState(
  env: OAuthStoreEnv,
  tenant: string,
  id: string,
  change: (state: OAuthState) => OAuthState | null | Promise<OAuthState | null>,
): Promise<OAuthState | null> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const stored = await readOAuthState(env, tenant, id);
    if (!stored) return null;
    const next = await change(stored.state);
    if (next === null) return stored.state;
    const key = await credentialsKey(env.CREDENTIALS_KEY);
    const ciphertext = await encryptSecret(key, tenant, id, { ...stored.secret, oauth: next });
    if (await updateCredentialSecret(env.DB, tenant, id, ciphertext, stored.ciphertext)) return next;
  }
  throw new Error(`credential ${id} kept changing; try again`);
}
