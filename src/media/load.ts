import type { MediaBlock, Message } from "../core/messages";
import { log } from "../core/log";
import { ProviderError, type MediaData } from "../providers/types";
import { encodeBase64 } from "../core/base64";
import { MAX_CALL_MEDIA_BYTES } from "./limits";
import { getMedia, type MediaScope } from "./store";

/** R2 reads in flight at once (a Worker holds at most six connections, a provider stream among them). */
const READ_CONCURRENCY = 4;

const mediaBlocksOf = (messages: Message[]): MediaBlock[] =>
  messages.flatMap((m) => m.content.filter((b): b is MediaBlock => b.type === "image" || b.type === "file"));

/**
 * Loads the bytes of the media blocks in `messages` from R2 for one model call, as base64 by
 * media_id (ModelRequest.media). Newest first, up to MAX_CALL_MEDIA_BYTES decoded: older media
 * beyond it, and objects R2 does not have, are left out and the adapters send a text note in
 * their place. A failed R2 read is a retryable error of the call (the run's retry policy).
 */
export async function loadMedia(bucket: R2Bucket, scope: MediaScope, messages: Message[]): Promise<Record<string, MediaData>> {
  const wanted: MediaBlock[] = [];
  let budget = MAX_CALL_MEDIA_BYTES;
  const seen = new Set<string>();
  for (const block of mediaBlocksOf(messages).reverse()) {
    if (seen.has(block.media_id)) continue;
    seen.add(block.media_id);
    const size = block.size ?? 0;
    if (size > budget) continue;
    budget -= size;
    wanted.push(block);
  }
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
