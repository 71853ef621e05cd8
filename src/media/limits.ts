/** The media rules of docs/api.md (Runs: content parts; Errors: 413). One MB is 1024 × 1024 bytes. */

export const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"] as const;
export const FILE_TYPES = ["application/pdf", "text/plain", "text/markdown"] as const;

export type ImageType = (typeof IMAGE_TYPES)[number];
export type FileType = (typeof FILE_TYPES)[number];
export type MediaType = ImageType | FileType;

const MB = 1024 * 1024;

/**
 * Base64 characters of one image: Anthropic counts its 5 MB image limit on the base64 text
 * ("image exceeds 5 MB maximum"), so that is the limit of every image Agentry stores.
 */
export const MAX_IMAGE_BASE64_BYTES = 5 * MB;
/** Decoded bytes of one image part: what fits in MAX_IMAGE_BASE64_BYTES of base64 (3.75 MB). */
export const MAX_IMAGE_BYTES = (MAX_IMAGE_BASE64_BYTES / 4) * 3;
/**
 * Decoded bytes of one image part when the Images binding is configured: it is scaled down to
 * MAX_IMAGE_BYTES before it is stored (src/media/fit-image.ts).
 */
export const MAX_SCALABLE_IMAGE_BYTES = 20 * MB;
/** Pixels on an image's longer side (Anthropic refuses larger images; OpenAI scales them down). */
export const MAX_IMAGE_SIDE_PX = 8000;
/** Pages of one PDF (Anthropic and OpenAI take at most 100 pages of PDF in a request). */
export const MAX_PDF_PAGES = 100;
/** Decoded bytes of one file part. */
export const MAX_FILE_BYTES = 20 * MB;
/** Content parts of one input. */
export const MAX_PARTS = 20;
/**
 * Decoded media bytes of one input, URL images included. A 25 MB JSON body carries at most
 * ~18.75 MB of base64-decoded bytes; URL images could add 20 × 5 MB, more than a Worker's
 * 128 MB of memory should hold at once.
 */
export const MAX_INPUT_MEDIA_BYTES = 20 * MB;
/** Characters of an input's text parts: its transcript row stays well under D1's 2 MB row limit. */
export const MAX_INPUT_CHARS = 1_000_000;
/**
 * Decoded media bytes sent with one model call, newest first; older media beyond it are sent
 * as a short text note. Anthropic caps a request at 32 MB, and base64 adds a third.
 */
export const MAX_CALL_MEDIA_BYTES = 20 * MB;
/**
 * Bytes of one request body, the strictest of the three APIs (Anthropic: 32 MB, a 413 from its
 * edge; OpenAI's Responses and Chat take more). callMedia keeps the media of a call within what
 * the rest of the request leaves of it.
 */
export const MAX_REQUEST_BYTES = 32 * MB;
/** Room kept for what a request adds around its messages: tools, system prompt, settings, JSON framing. */
export const REQUEST_OVERHEAD_BYTES = 1 * MB;
/** Images one model call carries (Anthropic: 100 a request on 200K-window models; OpenAI 500). */
export const MAX_CALL_IMAGES = 100;
/** Past this many images in one request, Anthropic takes only images of at most MANY_IMAGES_SIDE_PX on a side. */
export const MANY_IMAGES = 20;
export const MANY_IMAGES_SIDE_PX = 2000;
/** Pages of PDF one model call carries (Anthropic and OpenAI: 100 a request). */
export const MAX_CALL_PDF_PAGES = 100;

export const isImageType = (value: string): value is ImageType => (IMAGE_TYPES as readonly string[]).includes(value);

/** The size rule of a part, for its 413: an image that can be scaled down may be larger than one stored as it is. */
export const maxBytesOf = (kind: "image" | "file", scalable: boolean) =>
  kind === "file" ? MAX_FILE_BYTES : scalable ? MAX_SCALABLE_IMAGE_BYTES : MAX_IMAGE_BYTES;

/** "5 MB", "3.75 MB" */
export const formatMb = (bytes: number) => `${Math.round((bytes / MB) * 100) / 100} MB`;

/** How an image limit reads in a 413: the vendors count it on the base64 text. */
export const IMAGE_LIMIT_TEXT = `${formatMb(MAX_IMAGE_BASE64_BYTES)} as base64, ${formatMb(MAX_IMAGE_BYTES)} of image`;
