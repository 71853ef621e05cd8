import { ApiError, invalidFields, type FieldError } from "../core/errors";
import { checkOutboundUrl } from "../core/url-guard";
import { base64Length, compactBase64, decodeBase64 } from "../core/base64";
import { formatMb, IMAGE_LIMIT_TEXT, MAX_INPUT_CHARS, MAX_PARTS, maxBytesOf, type ImageType, type MediaType } from "./limits";
import { measureMedia, type MediaMeasure } from "./measure";
import type { ContentPart } from "./part-schemas";
import { isUtf8, looksLikePdf, sniffImage } from "./sniff";

/**
 * Where an input is checked: the deployment's ENVIRONMENT (the outbound URL guard) and its
 * Images binding, if configured (images over a limit are then scaled down, not refused).
 */
export type MediaContext = { environment: string | undefined; images?: ImagesBinding | undefined };

/** The media context of a Worker's bindings. */
export const mediaContext = (env: { ENVIRONMENT?: string; IMAGES?: ImagesBinding }): MediaContext => ({
  environment: env.ENVIRONMENT,
  images: env.IMAGES,
});

/** Media bytes checked and decoded, not stored yet. */
export type MediaBytes = { type: "image" | "file"; media_type: MediaType; bytes: Uint8Array; name?: string } & MediaMeasure;

/** An image URL that passed the outbound URL guard, fetched by `resolveInput`. */
export type ImageUrl = { type: "image"; url: string; media_type?: ImageType; path: string };

export type ParsedPart = { type: "text"; text: string } | MediaBytes | ImageUrl;

/** A part's field path for `details.fields` (docs/api.md: `input.1.media_type`). */
const pathOf = (index: number, field: string) => `input.${index}.${field}`;

/**
 * A 413 naming the part: `details.fields` as for a 400, so a client finds the part at fault
 * the same way.
 */
export const tooLarge = (path: string, message: string) => new ApiError("payload_too_large", message, { fields: [{ path, message }] });

/**
 * Checks a run's `input` without storing anything: the number of parts, the text size, each
 * part's base64, decoded size and bytes (an image must be what its media type says, a PDF a
 * PDF, a text file UTF-8), and image URLs against the outbound URL guard. Throws `400` naming
 * every field at fault, or `413` naming the first part over a limit. URLs are fetched later
 * (`resolveInput`), once the cheap checks and the agent lookup have passed.
 */
export function parseInput(input: string | ContentPart[], context: MediaContext): ParsedPart[] {
  const parts = typeof input === "string" ? [{ type: "text" as const, text: input }] : input;
  if (parts.length > MAX_PARTS)
    throw tooLarge(`input.${MAX_PARTS}`, `An input has at most ${MAX_PARTS} content parts (this one has ${parts.length})`);
  const chars = parts.reduce((n, p) => n + (p.type === "text" ? p.text.length : 0), 0);
  if (chars > MAX_INPUT_CHARS) throw new ApiError("payload_too_large", `A run's text input is limited to ${MAX_INPUT_CHARS} characters`);
  const invalid: FieldError[] = [];
  const parsed = parts.map((part, index): ParsedPart => {
    if (part.type === "text") return part;
    if (part.type === "image" && part.url !== undefined) {
      const refused = checkOutboundUrl(part.url, context.environment);
      if (refused) invalid.push({ path: pathOf(index, "url"), message: refused });
      return { type: "image", url: part.url, path: pathOf(index, "url"), ...(part.media_type ? { media_type: part.media_type } : {}) };
    }
    const dataPath = pathOf(index, "data");
    // The schema has checked that data comes with its media_type; an image without either is refused there.
    if (part.media_type === undefined || part.data === undefined) {
      invalid.push({ path: part.media_type === undefined ? pathOf(index, "media_type") : dataPath, message: "required" });
      return { type: "text", text: "" };
    }
    const scalable = context.images !== undefined;
    const decoded = decodePart(part.type, part.media_type, part.data, dataPath, scalable);
    if ("message" in decoded) {
      invalid.push(decoded);
      return { type: "text", text: "" };
    }
    const measured = measureMedia(part.media_type, decoded.bytes, dataPath, scalable);
    return {
      type: part.type,
      media_type: part.media_type,
      bytes: decoded.bytes,
      ...measured,
      ...(part.type === "file" ? { name: part.name } : {}),
    };
  });
  if (invalid.length > 0) throw invalidFields(invalid);
  return parsed;
}

/** Decodes one part's base64 and checks its bytes; a 413 is thrown, a 400 returned to be collected. */
function decodePart(
  kind: "image" | "file",
  mediaType: MediaType,
  data: string,
  path: string,
  scalable: boolean,
): { bytes: Uint8Array } | FieldError {
  if (/^data:/i.test(data)) return { path, message: "must be plain base64, without a data: URL prefix" };
  const text = compactBase64(data);
  const size = base64Length(text);
  if (size === null) return { path, message: "is not valid base64" };
  const max = maxBytesOf(kind, scalable);
  const limit = kind === "image" && !scalable ? IMAGE_LIMIT_TEXT : formatMb(max);
  if (size > max) throw tooLarge(path, `The ${kind} is ${size} bytes; ${kind}s are limited to ${limit}`);
  const bytes = decodeBase64(text);
  const problem = checkBytes(mediaType, bytes);
  return problem ? { path, message: problem } : { bytes };
}

/** Why `bytes` are not what `mediaType` says, or null. */
export function checkBytes(mediaType: MediaType, bytes: Uint8Array): string | null {
  if (bytes.length === 0) return "is empty";
  switch (mediaType) {
    case "image/png":
    case "image/jpeg":
    case "image/gif":
    case "image/webp": {
      const sniffed = sniffImage(bytes);
      if (sniffed === mediaType) return null;
      return sniffed ? `is ${sniffed}, not ${mediaType}` : `is not a ${mediaType} image`;
    }
    case "application/pdf":
      return looksLikePdf(bytes) ? null : "is not a PDF";
    case "text/plain":
    case "text/markdown":
      return isUtf8(bytes) ? null : "is not UTF-8 text";
  }
}
