import { newId } from "../core/ids";
import type { InputPart } from "../run-model";
import type { ResolvedPart } from "./resolve-input";
import { deleteMedia, putMedia, type MediaScope } from "./store";

/** An input whose media are in R2: the references the run keeps, and the ids this request wrote. */
export type StagedInput = { input: InputPart[]; written: string[] };

/**
 * Writes the media of a checked input to R2, one object per part (`med_…` ids, never reused),
 * and returns the input as the run stores it: references with `media_id` and `size`, never
 * the bytes. When a write fails, the objects already written are deleted before the error
 * goes on.
 */
export async function stageInput(bucket: R2Bucket, scope: MediaScope, runId: string, parts: ResolvedPart[]): Promise<StagedInput> {
  const written: string[] = [];
  const input: InputPart[] = [];
  try {
    for (const part of parts) {
      if (part.type === "text") {
        input.push(part);
        continue;
      }
      const mediaId = newId("med");
      await putMedia(bucket, scope, mediaId, { media_type: part.media_type, bytes: part.bytes, run_id: runId, name: part.name });
      written.push(mediaId);
      const measured = {
        ...(part.width !== undefined ? { width: part.width, height: part.height } : {}),
        ...(part.pages !== undefined ? { pages: part.pages } : {}),
      };
      const reference = { media_type: part.media_type, media_id: mediaId, size: part.bytes.byteLength, ...measured };
      input.push(part.type === "image" ? { type: "image", ...reference } : { type: "file", ...reference, name: part.name ?? mediaId });
    }
  } catch (error) {
    await deleteMedia(bucket, scope, written).catch(() => undefined);
    throw error;
  }
  return { input, written };
}

/**
 * Deletes the objects this request wrote that `kept` (the input of the run the session
 * answered with) does not reference: all of them when the turn was refused, or when a retried
 * request (`Idempotency-Key`) was answered the run the first request created.
 */
export async function releaseUnreferenced(bucket: R2Bucket, scope: MediaScope, written: string[], kept: InputPart[]): Promise<void> {
  const referenced = new Set(kept.flatMap((p) => (p.type === "image" || p.type === "file" ? [p.media_id] : [])));
  const orphans = written.filter((id) => !referenced.has(id));
  if (orphans.length > 0) await deleteMedia(bucket, scope, orphans);
}
