import type { MediaBlock } from "../core/messages";
import { decodeBase64 } from "../core/base64";
import { gifFrames } from "../media/gif-frames";
import type { MediaData } from "./types";

/** OpenAI cuts an image into patches of 32 px; at `auto` detail it refuses one of more than 30,000 (R30). */
const PATCH_PX = 32;
const MAX_PATCHES = 30_000;

/**
 * How an image goes to OpenAI: `high` detail (which OpenAI scales to fit 2048 px, never over its
 * patch limit) for an image over 30,000 patches or of unknown size, `auto` otherwise; null for an
 * animated GIF, which OpenAI refuses ("You uploaded an unsupported image") and which is sent as
 * a note instead. Anthropic takes the same stored images as they are (docs/media.md).
 */
export function openaiImageDetail(block: MediaBlock, data: MediaData): "auto" | "high" | null {
  if (data.media_type === "image/gif" && (gifFrames(decodeBase64(data.data)) ?? 1) > 1) return null;
  if (block.width === undefined || block.height === undefined) return "high";
  const patches = Math.ceil(block.width / PATCH_PX) * Math.ceil(block.height / PATCH_PX);
  return patches > MAX_PATCHES ? "high" : "auto";
}
