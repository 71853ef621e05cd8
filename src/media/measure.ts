import { ApiError, invalidFields } from "../core/errors";
import { imageSize, pdfEncrypted, pdfPages } from "./image-size";
import { MAX_IMAGE_SIDE_PX, MAX_PDF_PAGES, type MediaType, isImageType } from "./limits";

/** What Agentry records of an image's or a PDF's content, for the per-call limits (load.ts). */
export type MediaMeasure = { width?: number; height?: number; pages?: number };

/**
 * Measures checked media bytes against the vendors' content limits, before anything is stored:
 * an image over MAX_IMAGE_SIDE_PX on a side (unless it is `scalable`: the Images binding scales
 * it down later) or an encrypted PDF is a 400, a PDF over MAX_PDF_PAGES pages a 413, all naming
 * `path`. Returns what it measured (a size or a page count it cannot read is not refused).
 */
export function measureMedia(mediaType: MediaType, bytes: Uint8Array, path: string, scalable: boolean): MediaMeasure {
  if (isImageType(mediaType)) {
    const size = imageSize(mediaType, bytes);
    if (!size) return {};
    if (!scalable && Math.max(size.width, size.height) > MAX_IMAGE_SIDE_PX) {
      throw invalidFields([
        { path, message: `is ${size.width}×${size.height} px; images are limited to ${MAX_IMAGE_SIDE_PX} px on a side` },
      ]);
    }
    return { width: size.width, height: size.height };
  }
  if (mediaType !== "application/pdf") return {};
  // Anthropic reads only standard PDFs, without a password or encryption.
  if (pdfEncrypted(bytes))
    throw invalidFields([{ path, message: "is an encrypted (password-protected) PDF; only unencrypted PDFs can be read" }]);
  const pages = pdfPages(bytes);
  if (pages !== null && pages > MAX_PDF_PAGES) {
    const message = `is a PDF of ${pages} pages; a PDF is limited to ${MAX_PDF_PAGES} pages`;
    throw new ApiError("payload_too_large", message, { fields: [{ path, message }] });
  }
  return pages === null ? {} : { pages };
}
