/** Standard base64 (RFC 4648 §4), padded or not; whitespace is removed before the check. */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * The decoded byte length of a base64 text, or null when it is not base64. Computed before
 * decoding, so an oversized part is refused without allocating its bytes.
 */
export function base64Length(text: string): number | null {
  if (!BASE64.test(text) || text.length % 4 === 1) return null;
  const padding = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
  if (padding > 0 && text.length % 4 !== 0) return null;
  return Math.floor(((text.length - padding) * 3) / 4);
}

/** Removes the whitespace that MIME-style encoders put between lines. */
export const compactBase64 = (text: string) => (/\s/.test(text) ? text.replace(/\s+/g, "") : text);

/** Decodes base64 that `base64Length` accepted. */
export function decodeBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** A multiple of 3, so that the base64 of each chunk can be concatenated. */
const CHUNK = 3 * 8192;

/** Base64 of `bytes`, built in chunks (no call with millions of arguments). */
export function encodeBase64(bytes: Uint8Array): string {
  const parts: string[] = [];
  for (let at = 0; at < bytes.length; at += CHUNK) {
    parts.push(btoa(String.fromCharCode(...bytes.subarray(at, at + CHUNK))));
  }
  return parts.join("");
}
