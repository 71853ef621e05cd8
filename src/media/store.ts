import type { MediaType } from "./limits";

/** Whose media an object is: R2 keys are `tenant/session_id/media_id` (client ids never contain `/`). */
export type MediaScope = { tenant: string; session_id: string };

/** The R2 key of one media object. */
export const mediaKey = (scope: MediaScope, mediaId: string) => `${scope.tenant}/${scope.session_id}/${mediaId}`;

const sessionPrefix = (scope: MediaScope) => `${scope.tenant}/${scope.session_id}/`;

/** R2 deletes at most 1000 keys per call. */
const DELETE_BATCH = 1000;

/** Writes one media object; its bytes never change afterwards (ids are never reused). */
export async function putMedia(
  bucket: R2Bucket,
  scope: MediaScope,
  mediaId: string,
  media: { media_type: MediaType; bytes: Uint8Array; run_id: string; name?: string },
): Promise<void> {
  await bucket.put(mediaKey(scope, mediaId), media.bytes, {
    httpMetadata: { contentType: media.media_type },
    customMetadata: { run_id: media.run_id, ...(media.name ? { name: media.name } : {}) },
  });
}

/** The bytes of one media object, or null when it is not there. */
export async function getMedia(bucket: R2Bucket, scope: MediaScope, mediaId: string): Promise<Uint8Array | null> {
  const object = await bucket.get(mediaKey(scope, mediaId));
  if (!object) return null;
  return new Uint8Array(await object.arrayBuffer());
}

/** Deletes media objects by id (missing ones are fine). */
export async function deleteMedia(bucket: R2Bucket, scope: MediaScope, mediaIds: string[]): Promise<void> {
  for (let at = 0; at < mediaIds.length; at += DELETE_BATCH) {
    await bucket.delete(mediaIds.slice(at, at + DELETE_BATCH).map((id) => mediaKey(scope, id)));
  }
}

/**
 * Deletes every media object of a session (R2 list by prefix, then delete), page by page.
 * Each page is listed afresh: the deleted keys are gone from the next listing.
 */
export async function deleteSessionMedia(bucket: R2Bucket, scope: MediaScope): Promise<number> {
  const prefix = sessionPrefix(scope);
  let deleted = 0;
  for (;;) {
    const page = await bucket.list({ prefix, limit: DELETE_BATCH });
    const keys = page.objects.map((o) => o.key);
    if (keys.length > 0) await bucket.delete(keys);
    deleted += keys.length;
    if (!page.truncated || keys.length === 0) return deleted;
  }
}
