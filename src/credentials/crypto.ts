import { z } from "zod";
import { base64Length, decodeBase64, encodeBase64 } from "../core/base64";
import { CredentialError } from "./errors";
import { extraHeadersSchema } from "./headers";

/**
 * What is encrypted: the key and the header values, never stored in plain text; an `mcp_oauth`
 * credential's OAuth state (client, PKCE verifier, tokens) too, read by src/mcp/oauth-state.ts.
 */
export type CredentialSecret = { api_key: string; headers: Record<string, string>; oauth?: Record<string, unknown> };

const secretSchema = z.object({ api_key: z.string(), headers: extraHeadersSchema, oauth: z.record(z.string(), z.unknown()).optional() });

const KEY_BYTES = 32;
const IV_BYTES = 12;
/** `v1.<iv>.<ciphertext>`, both base64: the format version lets a later format sit beside this one. */
const VERSION = "v1";

/** Imported keys by secret text: importing once per isolate (a rotated secret gets its own entry). */
const imported = new Map<string, Promise<CryptoKey>>();

/**
 * The AES-GCM 256 key of the secret `CREDENTIALS_KEY` (32 bytes in base64). Throws
 * CredentialError when it is missing or not 32 bytes.
 */
export function credentialsKey(secret: string | undefined): Promise<CryptoKey> {
  if (!secret) {
    throw new CredentialError(
      "The operator has not set CREDENTIALS_KEY (32 random bytes in base64), so credentials cannot be stored or used",
    );
  }
  const cached = imported.get(secret);
  if (cached) return cached;
  const text = secret.trim();
  if (base64Length(text) !== KEY_BYTES) {
    throw new CredentialError("The operator's CREDENTIALS_KEY is not 32 bytes in base64, so credentials cannot be stored or used");
  }
  const key = crypto.subtle.importKey("raw", decodeBase64(text), "AES-GCM", false, ["encrypt", "decrypt"]);
  imported.set(secret, key);
  return key;
}

/** Encrypts a credential's secret for `tenant`/`id` with a fresh IV. */
export function encryptSecret(key: CryptoKey, tenant: string, id: string, secret: CredentialSecret): Promise<string> {
  return sealText(key, `${tenant}/${id}`, JSON.stringify(secret));
}

/**
 * Decrypts what `encryptSecret` stored for `tenant`/`id`. Throws CredentialError when it does
 * not decrypt: another key (CREDENTIALS_KEY rotated), another tenant or id, or an altered value.
 */
export async function decryptSecret(key: CryptoKey, tenant: string, id: string, stored: string): Promise<CredentialSecret> {
  const unreadable = new CredentialError(
    `Credential ${id} cannot be decrypted: CREDENTIALS_KEY has changed since it was stored (or the stored value was altered); store the credential again`,
  );
  const plain = await openText(key, `${tenant}/${id}`, stored, unreadable);
  // Authenticated by AES-GCM, so written by encryptSecret; parsed anyway rather than cast.
  const parsed = secretSchema.safeParse(JSON.parse(plain));
  if (!parsed.success) throw unreadable;
  return parsed.data;
}

/**
 * Encrypts `text` with a fresh IV, bound to `boundTo` (the additional data: a value moved to
 * another tenant or id does not decrypt). Credentials and webhook secrets are stored this way.
 */
export async function sealText(key: CryptoKey, boundTo: string, text: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const plain = new TextEncoder().encode(text);
  const additionalData = new TextEncoder().encode(boundTo);
  const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData }, key, plain);
  return `${VERSION}.${encodeBase64(iv)}.${encodeBase64(new Uint8Array(sealed))}`;
}

/** Decrypts what `sealText` stored for `boundTo`; throws `unreadable` when it does not decrypt. */
export async function openText(key: CryptoKey, boundTo: string, stored: string, unreadable: Error): Promise<string> {
  const [version, iv, sealed, ...rest] = stored.split(".");
  if (version !== VERSION || iv === undefined || sealed === undefined || rest.length > 0) throw unreadable;
  if (base64Length(iv) !== IV_BYTES || base64Length(sealed) === null) throw unreadable;
  try {
    const additionalData = new TextEncoder().encode(boundTo);
    const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: decodeBase64(iv), additionalData }, key, decodeBase64(sealed));
    return new TextDecoder().decode(plain);
  } catch {
    throw unreadable;
  }
}
