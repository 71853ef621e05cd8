import { z } from "zod";
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

/** A credential as the API shows it: never the key or the header values. */
export type CredentialInfo = {
  id: string;
  provider: CredentialProvider;
  base_url: string | null;
  header_names: string[];
  created_at: string;
};

const storedInfo = z.object({ provider: z.enum(CREDENTIAL_PROVIDERS), headerNames: z.array(z.string()) });

/** The API's view of a stored row. */
export function credentialInfoOf(row: CredentialRow): CredentialInfo {
  // Columns written by insertCredential from a validated request; parsed rather than cast.
  const { provider, headerNames } = storedInfo.parse({ provider: row.provider, headerNames: JSON.parse(row.headerNames) });
  return { id: row.id, provider, base_url: row.baseUrl, header_names: headerNames, created_at: row.createdAt };
}

/** The tenant's credential without its secret, or null. */
export async function findCredentialInfo(db: D1Database, tenant: string, id: string): Promise<CredentialInfo | null> {
  const row = await findCredentialRow(db, tenant, id);
  return row ? credentialInfoOf(row) : null;
}

/**
 * The credential with its decrypted secret. Throws CredentialError (its message names the
 * credential, never a secret) when it does not exist, CREDENTIALS_KEY is missing or invalid,
 * or the value cannot be decrypted (CREDENTIALS_KEY rotated: the credential must be stored again).
 */
export async function loadCredential(
  env: { DB: D1Database; CREDENTIALS_KEY?: string },
  tenant: string,
  id: string,
): Promise<{ info: CredentialInfo; secret: CredentialSecret }> {
  const row = await findCredentialRow(env.DB, tenant, id);
  if (!row) throw new CredentialError(`Credential ${id} does not exist`);
  const key = await credentialsKey(env.CREDENTIALS_KEY);
  return { info: credentialInfoOf(row), secret: await decryptSecret(key, tenant, id, row.ciphertext) };
}
