/** The media rules of API.md (Runs: content parts; Errors: 413). One MB is 1024 × 1024 bytes. */

export const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"] as const;
export const FILE_TYPES = ["application/pdf", "text/plain", "text/markdown"] as const;

export type ImageType = (typeof IMAGE_TYPES)[number];
export type FileType = (typeof FILE_TYPES)[number];
export type MediaType = ImageType | FileType;

const MB = 1024 * 1024;

/** Decoded bytes of one image part. */
export const MAX_IMAGE_BYTES = 5 * MB;
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

export const isImageType = (value: string): value is ImageType => (IMAGE_TYPES as readonly string[]).includes(value);

/** The size rule of a part, for its 413. */
export const maxBytesOf = (kind: "image" | "file") => (kind === "image" ? MAX_IMAGE_BYTES : MAX_FILE_BYTES);

/** "5 MB" */
export const formatMb = (bytes: number) => `${bytes / MB} MB`;
