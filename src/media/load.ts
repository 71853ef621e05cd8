import type { MediaBlock, Message } from "../core/messages";
import { log } from "../core/log";
import { ProviderError, type MediaData } from "../providers/types";
import { encodeBase64 } from "../core/base64";
import {
  MANY_IMAGES,
  MANY_IMAGES_SIDE_PX,
  MAX_CALL_IMAGES,
  MAX_CALL_MEDIA_BYTES,
  MAX_CALL_PDF_PAGES,
  MAX_REQUEST_BYTES,
  REQUEST_OVERHEAD_BYTES,
} from "./limits";
import { getMedia, type MediaScope } from "./store";

/** R2 reads in flight at once (a Worker holds at most six connections, a provider stream among them). */
const READ_CONCURRENCY = 4;

const mediaBlocksOf = (messages: Message[]): MediaBlock[] =>
  messages.flatMap((m) => m.content.filter((b): b is MediaBlock => b.type === "image" || b.type === "file"));

/**
 * The media blocks one model call carries, newest first, within what one request of any provider
 * may hold (a session's history is provider-neutral, and may move to another provider): at most
 * MAX_CALL_MEDIA_BYTES decoded, MAX_CALL_IMAGES images of which more than MANY_IMAGES only when
 * every one is at most MANY_IMAGES_SIDE_PX on a side, and MAX_CALL_PDF_PAGES pages of PDF. The
 * older media left out are sent as a text note naming each (the adapters' `mediaNote`), so a
 * session whose history outgrows a request keeps working.
 */
export function callMedia(messages: Message[]): MediaBlock[] {
  const wanted: MediaBlock[] = [];
  const blocks = mediaBlocksOf(messages);
  if (blocks.length === 0) return wanted;
  let bytes = mediaBudget(messages);
  let pages = MAX_CALL_PDF_PAGES;
  let images = 0;
  let allSmall = true;
  const seen = new Set<string>();
  for (const block of blocks.reverse()) {
    if (seen.has(block.media_id)) continue;
    seen.add(block.media_id);
    const size = block.size ?? 0;
    if (size > bytes) continue;
    if (block.type === "image") {
      // An image of unknown size (stored before images were measured) counts as a large one.
      const small = Math.max(block.width ?? Infinity, block.height ?? Infinity) <= MANY_IMAGES_SIDE_PX;
      const many = images + 1 > MANY_IMAGES;
      if (images + 1 > MAX_CALL_IMAGES || (many && !(allSmall && small))) continue;
      images += 1;
      allSmall &&= small;
    } else if (block.media_type === "application/pdf") {
      const count = block.pages ?? 1;
      if (count > pages) continue;
      pages -= count;
    }
    bytes -= size;
    wanted.push(block);
  }
  return wanted;
}

/**
 * Decoded media bytes a call may carry: MAX_CALL_MEDIA_BYTES, or less when the messages' text
 * (tool calls and results included) leaves less of MAX_REQUEST_BYTES, base64 adding a third.
 * Text is measured as UTF-8 JSON, the way it is sent; the adapters' own framing is in the overhead.
 */
export function mediaBudget(messages: Message[]): number {
  const text = messages.map((message) => message.content.filter((block) => block.type !== "image" && block.type !== "file"));
  const left = MAX_REQUEST_BYTES - REQUEST_OVERHEAD_BYTES - new TextEncoder().encode(JSON.stringify(text)).byteLength;
  return Math.max(0, Math.min(MAX_CALL_MEDIA_BYTES, Math.floor((left * 3) / 4)));
}

/**
 * Loads the bytes of the media blocks a model call carries (callMedia) from R2, as base64 by
 * media_id (ModelRequest.media). Objects R2 does not have are left out too, and the adapters send
 * a text note in their place. A failed R2 read is a retryable error of the call (the run's retry
 * policy).
 */
export async function loadMedia(bucket: R2Bucket, scope: MediaScope, messages: Message[]): Promise<Record<string, MediaData>> {
  const wanted = callMedia(messages);
  const loaded: Record<string, MediaData> = {};
  const queue = [...wanted];
  const worker = async () => {
    for (let block = queue.shift(); block; block = queue.shift()) {
      let bytes: Uint8Array | null;
      try {
        bytes = await getMedia(bucket, scope, block.media_id);
      } catch {
        throw new ProviderError("internal", "The run's media could not be read from storage", true);
      }
      if (bytes === null) {
        log({ event: "media_missing", session_id: scope.session_id, media_id: block.media_id });
        continue;
      }
      loaded[block.media_id] = { media_type: block.media_type, data: encodeBase64(bytes) };
    }
  };
  await Promise.all(Array.from({ length: Math.min(READ_CONCURRENCY, wanted.length) }, worker));
  return loaded;
}
