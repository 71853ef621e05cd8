import { CredentialError } from "../credentials";
import { credentialsKey, openText, sealText } from "../credentials/crypto";

/** The additional data a webhook's secret is sealed with: another tenant's or webhook's row does not decrypt. */
const boundTo = (tenant: string, id: string) => `webhook:${tenant}/${id}`;

/** Encrypts a webhook's signing secret with `CREDENTIALS_KEY`, as credentials are (src/credentials/crypto.ts). */
export async function sealWebhookSecret(keySecret: string | undefined, tenant: string, id: string, secret: string): Promise<string> {
  return sealText(await credentialsKey(keySecret), boundTo(tenant, id), secret);
}

/** Decrypts a webhook's signing secret; throws CredentialError (without the secret) when it does not decrypt. */
export async function openWebhookSecret(keySecret: string | undefined, tenant: string, id: string, stored: string): Promise<string> {
  const unreadable = new CredentialError(`Webhook ${id}'s secret cannot be decrypted: CREDENTIALS_KEY has changed since it was made`);
  return openText(await credentialsKey(keySecret), boundTo(tenant, id), stored, unreadable);
}
