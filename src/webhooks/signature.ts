import { decodeBase64, encodeBase64 } from "../core/base64";

/** A webhook's signing secret: `whsec_` and 32 random bytes in base64 (Standard Webhooks' form). */
const SECRET_PREFIX = "whsec_";
const SECRET_BYTES = 32;

/** A new signing secret, shown to the tenant once (at creation) and stored encrypted. */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${encodeBase64(crypto.getRandomValues(new Uint8Array(SECRET_BYTES)))}`;
}

/**
 * The Standard Webhooks headers of one attempt: `webhook-id`, `webhook-timestamp` (unix seconds,
 * the attempt's time) and `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`,
 * keyed with the base64-decoded part of the secret after `whsec_`.
 */
export async function signedHeaders(secret: string, id: string, timestamp: number, body: string): Promise<Record<string, string>> {
  const raw = decodeBase64(secret.slice(SECRET_PREFIX.length));
  const key = await crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${id}.${timestamp}.${body}`));
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": `v1,${encodeBase64(new Uint8Array(mac))}`,
  };
}
