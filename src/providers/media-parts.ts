import type { MediaBlock } from "../core/messages";
import { decodeBase64 } from "../core/base64";
import type { MediaData } from "./types";

/** The text sent in place of a media block whose bytes were not loaded (missing, or over the call's budget). */
export const mediaNote = (block: MediaBlock) =>
  `[${block.type} ${block.name ? `"${block.name}" ` : ""}(${block.media_type}, ${block.media_id}) is not available]`;

/** `data:<media_type>;base64,<data>`: how OpenAI takes inline images and files. */
export const dataUrl = (media: MediaData) => `data:${media.media_type};base64,${media.data}`;

/** The UTF-8 text of a text/plain or text/markdown file (checked to be UTF-8 when it was stored). */
export function decodeText(media: MediaData): string {
  return new TextDecoder().decode(decodeBase64(media.data));
}

export const isTextFile = (mediaType: string) => mediaType === "text/plain" || mediaType === "text/markdown";

/**
 * A text file as a text part, for endpoints without a text document type: framed so that the
 * model can tell the file from the user's words.
 */
export const framedText = (block: MediaBlock, media: MediaData) =>
  `<file name="${(block.name ?? block.media_id).replace(/"/g, "'")}" media_type="${block.media_type}">\n${decodeText(media)}\n</file>`;
