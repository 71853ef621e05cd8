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

/** A PNG chunk: length, type, data, CRC. */
function pngChunk(type: string, data: Uint8Array): Uint8Array {
  const chunk = new Uint8Array(12 + data.length);
  const view = new DataView(chunk.buffer);
  view.setUint32(0, data.length);
  chunk.set(new TextEncoder().encode(type), 4);
  chunk.set(data, 8);
  view.setUint32(8 + data.length, crc32(chunk.subarray(4, 8 + data.length)));
  return chunk;
}

const concat = (parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
};

/**
 * A real PNG that image decoders read (not only its header): 8-bit grey (`channels` 1) or RGB
 * (3), each row's bytes from `pixel(x, y, channel)`.
 */
export async function realPng(
  width: number,
  height: number,
  channels: 1 | 3,
  pixel: (x: number, y: number, c: number) => number,
): Promise<Uint8Array> {
  const stride = 1 + width * channels;
  const raw = new Uint8Array(stride * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width * channels; x++) raw[y * stride + 1 + x] = pixel(Math.floor(x / channels), y, x % channels);
  }
  const compressed = new Uint8Array(
    await new Response(new Blob([raw]).stream().pipeThrough(new CompressionStream("deflate"))).arrayBuffer(),
  );
  const header = new Uint8Array(13);
  const view = new DataView(header.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  header.set([8, channels === 1 ? 0 : 2, 0, 0, 0], 8);
  const signature = new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10]);
  return concat([signature, pngChunk("IHDR", header), pngChunk("IDAT", compressed), pngChunk("IEND", new Uint8Array())]);
}

/** A grey gradient: compresses to a few KB at any size. */
export const gradientPng = (width: number, height: number) => realPng(width, height, 1, (x) => x % 256);

/** Random RGB pixels: a PNG of about 3 bytes a pixel, which no encoding shrinks much. */
export function noisePng(width: number, height: number): Promise<Uint8Array> {
  const noise = new Uint8Array(width * height * 3);
  for (let at = 0; at < noise.length; at += 65536) crypto.getRandomValues(noise.subarray(at, at + 65536));
  return realPng(width, height, 3, (x, y, c) => noise[(y * width + x) * 3 + c] ?? 0);
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
  toBase64(
    new TextEncoder().encode(
      `%PDF-1.4\n${Array.from({ length: pages }, (_, i) => `${i + 3} 0 obj << /Type /Page /Parent 2 0 R >> endobj\n`).join("")}%%EOF\n`,
    ),
  );

/** A one-page PDF whose trailer names an encryption dictionary (a password-protected PDF). */
export const encryptedPdf = () =>
  toBase64(
    new TextEncoder().encode("%PDF-1.4\n3 0 obj << /Type /Page /Parent 2 0 R >> endobj\ntrailer << /Root 1 0 R /Encrypt 9 0 R >>\n%%EOF\n"),
  );
