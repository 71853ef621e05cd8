import { ApiError, invalidFields } from "../core/errors";
import { checkOutboundUrl, isRedirect } from "../core/url-guard";
import { formatMb, IMAGE_LIMIT_TEXT, maxBytesOf, type ImageType } from "./limits";
import { tooLarge } from "./parse-input";
import { sniffImage } from "./sniff";

/** The whole fetch of one image, redirects included. */
const FETCH_TIMEOUT_MS = 10_000;
/** Each hop is checked by the outbound URL guard again. */
const MAX_REDIRECTS = 3;

const refuse = (path: string, message: string) => invalidFields([{ path, message }], `The image at ${path} ${message}`);

/**
 * Fetches an image part's URL once, when the run is created, so that the run is reproducible
 * and every provider gets the same bytes (docs/api.md: media is stored once). Redirects are
 * followed by hand so that each hop passes the outbound URL guard; the body is read up to
 * the image limit and no further (a larger one when it is `scalable`: the Images binding scales
 * it down). The format comes from the bytes, not from Content-Type. Failures are the client's:
 * `400` (or `413`) naming `path`.
 */
export async function fetchImage(
  url: string,
  path: string,
  environment: string | undefined,
  scalable: boolean,
): Promise<{ media_type: ImageType; bytes: Uint8Array }> {
  const signal = AbortSignal.timeout(FETCH_TIMEOUT_MS);
  let target = url;
  for (let hop = 0; ; hop++) {
    let response: Response;
    try {
      response = await fetch(target, { signal, redirect: "manual", headers: { accept: "image/*" } });
    } catch {
      throw refuse(path, signal.aborted ? `did not answer within ${FETCH_TIMEOUT_MS / 1000} s` : "could not be fetched");
    }
    const location = response.headers.get("location");
    if (isRedirect(response.status) && location) {
      await response.body?.cancel();
      if (hop >= MAX_REDIRECTS) throw refuse(path, `redirected more than ${MAX_REDIRECTS} times`);
      target = new URL(location, target).toString();
      const refused = checkOutboundUrl(target, environment);
      if (refused) throw refuse(path, `redirected to a URL that ${refused}`);
      continue;
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw refuse(path, `answered HTTP ${response.status}`);
    }
    const bytes = await readCapped(response, path, signal, maxBytesOf("image", scalable));
    const media_type = sniffImage(bytes);
    if (!media_type) throw refuse(path, "is not a PNG, JPEG, GIF or WebP image");
    return { media_type, bytes };
  }
}

async function readCapped(response: Response, path: string, signal: AbortSignal, max: number): Promise<Uint8Array> {
  const over = () => tooLarge(path, `The image is over ${formatMb(max)}; images are limited to ${IMAGE_LIMIT_TEXT}`);
  const declared = Number(response.headers.get("content-length") ?? "NaN");
  if (declared > max) {
    await response.body?.cancel();
    throw over();
  }
  if (!response.body) return new Uint8Array();
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > max) {
        await reader.cancel();
        throw over();
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw refuse(path, signal.aborted ? `did not answer within ${FETCH_TIMEOUT_MS / 1000} s` : "could not be read");
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}
