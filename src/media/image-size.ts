import type { ImageType } from "./limits";

/** An image's size in pixels. */
export type ImageSize = { width: number; height: number };

const u16be = (b: Uint8Array, at: number) => ((b[at] ?? 0) << 8) | (b[at + 1] ?? 0);
const u16le = (b: Uint8Array, at: number) => (b[at] ?? 0) | ((b[at + 1] ?? 0) << 8);
const u24le = (b: Uint8Array, at: number) => u16le(b, at) | ((b[at + 2] ?? 0) << 16);
const u32be = (b: Uint8Array, at: number) => ((u16be(b, at) << 16) >>> 0) + u16be(b, at + 2);

/** PNG: the IHDR chunk, right after the signature. */
const pngSize = (b: Uint8Array): ImageSize | null => (b.length >= 24 ? { width: u32be(b, 16), height: u32be(b, 20) } : null);

/** GIF: the logical screen size after the signature. */
const gifSize = (b: Uint8Array): ImageSize | null => (b.length >= 10 ? { width: u16le(b, 6), height: u16le(b, 8) } : null);

/** JPEG: the first start-of-frame segment (SOF0–SOF15 but DHT, JPG and DAC). */
function jpegSize(b: Uint8Array): ImageSize | null {
  let at = 2;
  while (at + 9 < b.length) {
    if (b[at] !== 0xff) return null;
    const marker = b[at + 1] ?? 0;
    if (marker === 0xff) {
      at += 1;
      continue;
    }
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { width: u16be(b, at + 7), height: u16be(b, at + 5) };
    }
    at += 2 + u16be(b, at + 2);
  }
  return null;
}

/** WebP: a lossy (VP8), lossless (VP8L) or extended (VP8X) first chunk. */
function webpSize(b: Uint8Array): ImageSize | null {
  const chunk = String.fromCharCode(...b.subarray(12, 16));
  if (chunk === "VP8 " && b.length >= 30) return { width: u16le(b, 26) & 0x3fff, height: u16le(b, 28) & 0x3fff };
  if (chunk === "VP8L" && b.length >= 25) {
    const bits = (b[21] ?? 0) | ((b[22] ?? 0) << 8) | ((b[23] ?? 0) << 16) | ((b[24] ?? 0) << 24);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (chunk === "VP8X" && b.length >= 30) return { width: u24le(b, 24) + 1, height: u24le(b, 27) + 1 };
  return null;
}

/** The size of an image of a known type from its header, or null when the header cannot be read. */
export function imageSize(type: ImageType, bytes: Uint8Array): ImageSize | null {
  switch (type) {
    case "image/png":
      return pngSize(bytes);
    case "image/gif":
      return gifSize(bytes);
    case "image/jpeg":
      return jpegSize(bytes);
    case "image/webp":
      return webpSize(bytes);
  }
}

/**
 * The pages of a PDF, counted from its page objects (`/Type /Page`), or null when none can be
 * seen (they are in compressed object streams): a count Agentry cannot make is not a refusal.
 */
export function pdfPages(bytes: Uint8Array): number | null {
  const text = new TextDecoder("latin1").decode(bytes);
  const pages = text.match(/\/Type\s*\/Page(?![a-zA-Z])/g)?.length ?? 0;
  return pages > 0 ? pages : null;
}

/**
 * Whether a PDF is encrypted (password-protected): its trailer, or the dictionary of its
 * cross-reference stream, names an `/Encrypt` dictionary (an object reference or one inline).
 */
export function pdfEncrypted(bytes: Uint8Array): boolean {
  return /\/Encrypt\s*(\d+\s+\d+\s+R|<<)/.test(new TextDecoder("latin1").decode(bytes));
}
