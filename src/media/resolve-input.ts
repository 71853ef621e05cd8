import { ApiError } from "../core/errors";
import { fetchImage } from "./fetch-image";
import { fitImage, worthFitting, type ImageBytes } from "./fit-image";
import { formatMb, isImageType, MAX_INPUT_MEDIA_BYTES } from "./limits";
import { measureMedia } from "./measure";
import type { MediaBytes, MediaContext, ParsedPart } from "./parse-input";

/** An input ready to store: text parts and media bytes, all checked. */
export type ResolvedPart = { type: "text"; text: string } | MediaBytes;

/**
 * Fetches the image URLs of a parsed input, one at a time (a Worker holds at most six
 * connections), scales images down with the Images binding where one is configured and an
 * image is over a limit (src/media/fit-image.ts), and checks the input's total media size.
 * Nothing is stored.
 */
export async function resolveInput(parts: ParsedPart[], context: MediaContext): Promise<ResolvedPart[]> {
  const resolved: ResolvedPart[] = [];
  let total = 0;
  for (const [index, part] of parts.entries()) {
    const media = part.type === "image" && "url" in part ? await fetched(part, context) : part;
    const path = "path" in part ? part.path : `input.${index}.data`;
    const fitted = context.images && isImage(media) && worthFitting(media) ? await fitImage(context.images, media, path) : media;
    resolved.push(fitted);
    if (fitted.type !== "text") total += fitted.bytes.byteLength;
    if (total > MAX_INPUT_MEDIA_BYTES) {
      throw new ApiError("payload_too_large", `The media of one input are limited to ${formatMb(MAX_INPUT_MEDIA_BYTES)} in total`, {
        fields: [{ path: "input", message: `media over ${formatMb(MAX_INPUT_MEDIA_BYTES)} in total` }],
      });
    }
  }
  return resolved;
}

const isImage = (part: ResolvedPart): part is ImageBytes => part.type === "image" && isImageType(part.media_type);

/** An image part given by URL, fetched, checked against its declared type and measured. */
async function fetched(part: Extract<ParsedPart, { url: string }>, context: MediaContext): Promise<MediaBytes & { type: "image" }> {
  const scalable = context.images !== undefined;
  const image = await fetchImage(part.url, part.path, context.environment, scalable);
  if (part.media_type && part.media_type !== image.media_type) {
    throw new ApiError("invalid_request", `The image at ${part.path} is ${image.media_type}, not ${part.media_type}`, {
      fields: [{ path: part.path, message: `is ${image.media_type}, not ${part.media_type}` }],
    });
  }
  return {
    type: "image",
    media_type: image.media_type,
    bytes: image.bytes,
    ...measureMedia(image.media_type, image.bytes, part.path, scalable),
  };
}
