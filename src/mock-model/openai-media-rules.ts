import { decodeBase64 } from "../core/base64";
import { gifFrames } from "../media/gif-frames";
import { imageSize, pdfPages } from "../media/image-size";
import { sniffImage } from "../media/sniff";
import { MODEL_CATALOG } from "../providers/model-catalog-data";
import { InvalidRequest } from "./conversation";
import { invalidValue } from "./openai-field-rules";

/**
 * OpenAI's image and PDF rules (docs/vendor-limits.md, R30, R31, C25, C26): PNG, JPEG, WEBP or a
 * still GIF; at most 30,000 patches of 32 px per image unless `detail` is `low` or `high` (which
 * scale it down); at most 500 images and 50 MB of images, 100 PDF pages and 32 MB of files per
 * request. Only inline data (`data:` URLs) is read.
 */

const limits = MODEL_CATALOG.media.openai;
const PATCH_PX = 32;
const MAX_PATCHES = 30_000;
const DETAILS = ["auto", "low", "high"];

/** An image or file part of a request: where it is, what it holds. */
export type MediaPart = { kind: "image"; url: string; detail: unknown; param: string } | { kind: "file"; data: string; param: string };

/** Throws OpenAI's refusal of the request's media; `param` is where OpenAI reports request-wide ones (`input`, `messages`). */
export function checkMedia(parts: MediaPart[], param: string): void {
  const totals = { images: 0, imageBytes: 0, pages: 0, fileBytes: 0 };
  for (const part of parts) {
    const inline = decode(part.kind === "image" ? part.url : part.data);
    if (part.kind === "file") {
      if (inline === null) continue;
      totals.fileBytes += inline.bytes.length;
      if (inline.type === "application/pdf") totals.pages += pdfPages(inline.bytes) ?? 1;
      continue;
    }
    totals.images += 1;
    if (part.detail !== undefined && part.detail !== null && !DETAILS.includes(String(part.detail))) {
      throw invalidValue(String(part.detail), DETAILS, `${part.param}.detail`);
    }
    if (inline === null) continue;
    totals.imageBytes += inline.bytes.length;
    checkImage(inline.bytes, part.detail, param);
  }
  const over = (what: string, max: number, got: number) =>
    new InvalidRequest(`Invalid '${param}': ${what}. Expected at most ${max}, but got ${got} instead.`, param, "invalid_value");
  if (totals.images > limits.images_per_request) throw over("too many images in one request", limits.images_per_request, totals.images);
  if (totals.imageBytes > limits.image_bytes_per_request)
    throw over("too many bytes of images in one request", limits.image_bytes_per_request, totals.imageBytes);
  if (totals.pages > limits.pdf_pages_per_request)
    throw over("too many PDF pages in one request", limits.pdf_pages_per_request, totals.pages);
  if (totals.fileBytes > limits.file_bytes_per_request)
    throw over("too many bytes of files in one request", limits.file_bytes_per_request, totals.fileBytes);
}

function checkImage(bytes: Uint8Array, detail: unknown, param: string): void {
  const type = sniffImage(bytes);
  if (type === null || (type === "image/gif" && (gifFrames(bytes) ?? 1) > 1)) {
    throw new InvalidRequest(
      "You uploaded an unsupported image. Please make sure your image has of one the following formats: ['png', 'jpeg', 'gif', 'webp'].",
      null,
      "invalid_image_format",
    );
  }
  const size = imageSize(type, bytes);
  if (size === null || detail === "low" || detail === "high") return;
  const patches = Math.ceil(size.width / PATCH_PX) * Math.ceil(size.height / PATCH_PX);
  if (patches > MAX_PATCHES) {
    throw new InvalidRequest(
      `The image you provided requires ${patches} patches after processing, exceeding the limit of ${MAX_PATCHES}. Please resize the image and try again.`,
      param,
      "invalid_value",
    );
  }
}

/** The bytes of a `data:<type>;base64,<data>` URL, or null for any other URL. */
function decode(url: string): { type: string; bytes: Uint8Array } | null {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (!match) return null;
  try {
    return { type: match[1] ?? "", bytes: decodeBase64(match[2] ?? "") };
  } catch {
    return null;
  }
}
