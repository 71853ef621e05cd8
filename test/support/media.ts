import { env } from "cloudflare:workers";

/** A 1×1 PNG, base64. */
export const TINY_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = (CRC_TABLE[(c ^ b) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

export const toBase64 = (bytes: Uint8Array) => {
  let binary = "";
  for (let at = 0; at < bytes.length; at += 8192) binary += String.fromCharCode(...bytes.subarray(at, at + 8192));
  return btoa(binary);
};

export const fromBase64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

/**
 * A valid PNG (the 1×1 one) with a `tEXt` chunk of `chars` characters before `IEND`: big
 * enough that the offline model's token count shows whether a request carried it.
 */
export function pngWithText(chars: number): Uint8Array {
  const png = fromBase64(TINY_PNG);
  const iend = png.length - 12;
  const data = new TextEncoder().encode(`Comment\0${"x".repeat(chars)}`);
  const chunk = new Uint8Array(12 + data.length);
  const view = new DataView(chunk.buffer);
  view.setUint32(0, data.length);
  chunk.set(new TextEncoder().encode("tEXt"), 4);
  chunk.set(data, 8);
  view.setUint32(8 + data.length, crc32(chunk.subarray(4, 8 + data.length)));
  const out = new Uint8Array(png.length + chunk.length);
  out.set(png.subarray(0, iend));
  out.set(chunk, iend);
  out.set(png.subarray(iend), iend + chunk.length);
  return out;
}

/** The R2 keys under `prefix` (e.g. `tenant/` or `tenant/session/`). */
export async function mediaKeys(prefix: string): Promise<string[]> {
  const listed = await env.MEDIA.list({ prefix });
  return listed.objects.map((o) => o.key);
}

/** The 1×1 PNG with its header saying `width`×`height`: what Agentry and the offline model measure (they read headers only). */
export function pngOfSize(width: number, height: number): string {
  const png = fromBase64(TINY_PNG);
  const view = new DataView(png.buffer);
  view.setUint32(16, width);
  view.setUint32(20, height);
  return toBase64(png);
}

/** A PDF whose body holds `pages` page objects, base64. */
export const pdfOfPages = (pages: number) =>
  toBase64(new TextEncoder().encode(`%PDF-1.4\n${Array.from({ length: pages }, (_, i) => `${i + 3} 0 obj << /Type /Page /Parent 2 0 R >> endobj\n`).join("")}%%EOF\n`));

/** A one-page PDF whose trailer names an encryption dictionary (a password-protected PDF). */
export const encryptedPdf = () =>
  toBase64(new TextEncoder().encode("%PDF-1.4\n3 0 obj << /Type /Page /Parent 2 0 R >> endobj\ntrailer << /Root 1 0 R /Encrypt 9 0 R >>\n%%EOF\n"));
