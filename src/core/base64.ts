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

/** The platform's base64 codec on Uint8Array (TC39 "Uint8Array to/from base64", in workerd and V8). */
type Base64Options = { alphabet?: "base64" | "base64url"; omitPadding?: boolean };
const codec = Uint8Array as unknown as { fromBase64(text: string, options?: { alphabet?: "base64" | "base64url" }): Uint8Array };
const encode = (bytes: Uint8Array, options?: Base64Options): string =>
  (bytes as unknown as { toBase64(options?: Base64Options): string }).toBase64(options);

/** Decodes base64 that `base64Length` accepted. */
export const decodeBase64 = (text: string): Uint8Array => codec.fromBase64(text);

/** Standard, padded base64 of `bytes`. */
export const encodeBase64 = (bytes: Uint8Array): string => encode(bytes);

/** URL-safe base64 without padding (RFC 4648 §5): key tokens, page cursors. */
export const encodeBase64Url = (bytes: Uint8Array): string => encode(bytes, { alphabet: "base64url", omitPadding: true });

/** Decodes URL-safe base64, padded or not; throws a SyntaxError on anything else. */
export const decodeBase64Url = (text: string): Uint8Array => codec.fromBase64(text, { alphabet: "base64url" });
