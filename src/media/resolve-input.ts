import { ApiError } from "../core/errors";
import { fetchImage } from "./fetch-image";
import { formatMb, MAX_INPUT_MEDIA_BYTES } from "./limits";
import { measureMedia } from "./measure";
import type { MediaBytes, ParsedPart } from "./parse-input";

/** An input ready to store: text parts and media bytes, all checked. */
export type ResolvedPart = { type: "text"; text: string } | MediaBytes;

/**
 * Fetches the image URLs of a parsed input, one at a time (a Worker holds at most six
 * connections), and checks the input's total media size. Nothing is stored.
 */
export async function resolveInput(parts: ParsedPart[], environment: string | undefined): Promise<ResolvedPart[]> {
  const resolved: ResolvedPart[] = [];
  let total = 0;
  for (const part of parts) {
    if (part.type === "image" && "url" in part) {
      const image = await fetchImage(part.url, part.path, environment);
      if (part.media_type && part.media_type !== image.media_type) {
        throw new ApiError("invalid_request", `The image at ${part.path} is ${image.media_type}, not ${part.media_type}`, {
          fields: [{ path: part.path, message: `is ${image.media_type}, not ${part.media_type}` }],
        });
      }
      resolved.push({ type: "image", media_type: image.media_type, bytes: image.bytes, ...measureMedia(image.media_type, image.bytes, part.path) });
    } else {
      resolved.push(part);
    }
    const last = resolved[resolved.length - 1];
    if (last && last.type !== "text") total += last.bytes.byteLength;
    if (total > MAX_INPUT_MEDIA_BYTES) {
      throw new ApiError("payload_too_large", `The media of one input are limited to ${formatMb(MAX_INPUT_MEDIA_BYTES)} in total`, {
        fields: [{ path: "input", message: `media over ${formatMb(MAX_INPUT_MEDIA_BYTES)} in total` }],
      });
    }
  }
  return resolved;
}
