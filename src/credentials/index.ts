import { z } from "zod";
import { lookupCacheMs } from "../core/settings";
import { TtlCache } from "../core/ttl-cache";
import { findCredentialRow } from "../db/credentials";
import type { CredentialRow } from "../db/credentials";
import { credentialsKey, decryptSecret } from "./crypto";
import type { CredentialSecret } from "./crypto";
import { CredentialError } from "./errors";

export { CredentialError } from "./errors";
export type { CredentialSecret } from "./crypto";

/** The providers a credential may be for (an agent's providers but `mock`). */
export const CREDENTIAL_PROVIDERS = ["anthropic", "openai", "openai-chat"] as const;
export type CredentialProvider = (typeof CREDENTIAL_PROVIDERS)[number];

/** What a credential is for: a model provider, or MCP servers (docs/mcp.md, Credentials). */
export const CREDENTIAL_TYPES = ["provider", "mcp", "mcp_oauth"] as const;
export type CredentialType = (typeof CREDENTIAL_TYPES)[number];

/** The `provider` column of an MCP credential (no provider). */
export const MCP_CREDENTIAL = "mcp";
/** The `provider` column of an MCP OAuth credential. */
export const MCP_OAUTH_CREDENTIAL = "mcp_oauth";

/** A credential as the API shows it: never the key, token or header values. */
export type CredentialInfo = {
  id: string;
  type: CredentialType;
  /** Null for an MCP credential. */
  provider: CredentialProvider | null;
  base_url: string | null;
  header_names: string[];
  created_at: string;
};

const storedInfo = z.object({
  provider: z.enum([...CREDENTIAL_PROVIDERS, MCP_CREDENTIAL, MCP_OAUTH_CREDENTIAL]),
  headerNames: z.array(z.string()),
});

/** The API's view of a stored row. */
export function credentialInfoOf(row: CredentialRow): CredentialInfo {
  // Columns written by insertCredential from a validated request; parsed rather than cast.
  const { provider, headerNames } = storedInfo.parse({ provider: row.provider, headerNames: JSON.parse(row.headerNames) });
  const base = { id: row.id, base_url: row.baseUrl, header_names: headerNames, created_at: row.createdAt };
  if (provider === MCP_CREDENTIAL || provider === MCP_OAUTH_CREDENTIAL) return { ...base, type: provider, provider: null };
  return { ...base, type: "provider", provider };
}

/** The tenant's credential without its secret, or null. */
export async function findCredentialInfo(db: D1Database, tenant: string, id: string): Promise<CredentialInfo | null> {
  const row = await findCredentialRow(db, tenant, id);
  return row ? credentialInfoOf(row) : null;
}

/** A credential with its decrypted secret. */
export type LoadedCredential = { info: CredentialInfo; secret: CredentialSecret };

/** Credentials read and decrypted in this isolate, by tenant and id. */
const loadedCredentials = new TtlCache<LoadedCredential>(500);
const cacheKeyOf = (tenant: string, id: string) => JSON.stringify([tenant, id]);

/**
 * The credential with its decrypted secret, served from this isolate's memory for up to
 * `LOOKUP_CACHE_MS` after it was read (`forgetCredential` drops it at once). Throws
 * CredentialError (its message names the credential, never a secret) when it does not exist,
 * CREDENTIALS_KEY is missing or invalid, or the value cannot be decrypted (CREDENTIALS_KEY
 * rotated: the credential must be stored again); failures are not cached.
 */
export async function loadCredential(
  env: { DB: D1Database; CREDENTIALS_KEY?: string; LOOKUP_CACHE_MS?: string },
  tenant: string,
  id: string,
): Promise<LoadedCredential> {
  const ttlMs = lookupCacheMs(env);
  const cacheKey = cacheKeyOf(tenant, id);
  const cached = loadedCredentials.get(cacheKey, ttlMs);
  if (cached) return cached;
  const ticket = loadedCredentials.ticket();
  const row = await findCredentialRow(env.DB, tenant, id);
  if (!row) throw new CredentialError(`Credential ${id} does not exist`);
  const key = await credentialsKey(env.CREDENTIALS_KEY);
  const loaded = { info: credentialInfoOf(row), secret: await decryptSecret(key, tenant, id, row.ciphertext) };
  if (ttlMs > 0) loadedCredentials.set(cacheKey, loaded, ticket);
  return loaded;
}

/** Drops a credential from this isolate's cache: called once it was deleted or stored anew. */
export function forgetCredential(tenant: string, id: string): void {
  loadedCredentials.delete(cacheKeyOf(tenant, id));
}
