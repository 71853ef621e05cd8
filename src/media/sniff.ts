import type { ImageType } from "./limits";

const startsWith = (bytes: Uint8Array, prefix: readonly number[], at = 0) =>
  bytes.length >= at + prefix.length && prefix.every((b, i) => bytes[at + i] === b);

const ascii = (text: string) => Array.from(text, (c) => c.charCodeAt(0));

/**
 * The image format of `bytes` from its signature (magic bytes), or null. Providers refuse an
 * image whose bytes do not match its declared media type, so Agentry checks before storing.
 */
export function sniffImage(bytes: Uint8Array): ImageType | null {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png";
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return "image/jpeg";
  if (startsWith(bytes, ascii("GIF87a")) || startsWith(bytes, ascii("GIF89a"))) return "image/gif";
  if (startsWith(bytes, ascii("RIFF")) && startsWith(bytes, ascii("WEBP"), 8)) return "image/webp";
  return null;
}

/** A PDF has `%PDF-` within its first 1024 bytes (readers tolerate a little junk before it). */
export function looksLikePdf(bytes: Uint8Array): boolean {
  const marker = ascii("%PDF-");
  const end = Math.min(bytes.length - marker.length, 1024);
  for (let at = 0; at <= end; at++) if (startsWith(bytes, marker, at)) return true;
  return false;
}

/** True when `bytes` are valid UTF-8 (text/plain and text/markdown files). */
export function isUtf8(bytes: Uint8Array): boolean {
  try {
    new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}
