import { decodeBase64, encodeBase64 } from "./base64";

/** A text gzipped, in base64 (what the D1 mirror keeps of its packs: a column of text). */
export async function gzipText(text: string): Promise<string> {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream("gzip"));
  return encodeBase64(new Uint8Array(await new Response(stream).arrayBuffer()));
}

/** The text `gzipText` gzipped. */
export async function gunzipText(base64: string): Promise<string> {
  const stream = new Blob([decodeBase64(base64)]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Response(stream).text();
}
