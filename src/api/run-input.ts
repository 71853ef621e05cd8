import { errorMessage } from "../core/errors";
import { log } from "../core/log";
import type { Env } from "../env";
import { releaseUnreferenced, stageInput, deleteMedia, type ResolvedPart } from "../media";
import type { InputPart, RunAnswer } from "../session";
import { callSession } from "../session/client";

/** The turn a request starts: whose session, and the run id planned for it. */
export type TurnScope = { tenant: string; session_id: string; run_id: string };

/**
 * Starts a turn whose input (and brought history, the first `pinned` parts) may carry media
 * (docs/media.md, "Order of writes"). The model
 * needs the bytes as soon as the session accepts the turn, so they are written to R2 first,
 * after every check has passed; then `start` asks the session. Whatever the session did not
 * take is deleted again: everything on a refusal (404, 409 session_busy …), everything on a
 * retried request that was answered its first run. When the call fails without an answer,
 * the session is asked whether it recorded the run before anything is deleted.
 */
export async function startWithMedia(
  env: Env,
  scope: TurnScope,
  parts: ResolvedPart[],
  start: (input: InputPart[]) => Promise<RunAnswer>,
  pinned = 0,
): Promise<RunAnswer> {
  const staged = await stageInput(env.MEDIA, scope, scope.run_id, parts);
  if (staged.written.length === 0) return start(staged.input);
  // The first `pinned` parts are a brought history's media: the run's messages keep them, not its
  // input, unless the run existed already (a retry), whose history came with the first request.
  const keptWith = (run: { input: InputPart[] }, replayed = false) => [...run.input, ...(replayed ? [] : staged.input.slice(0, pinned))];
  let answer: RunAnswer;
  try {
    answer = await start(staged.input);
  } catch (error) {
    await releaseIfNotRecorded(env, scope, staged.written, keptWith);
    throw error;
  }
  try {
    // A steer's input is kept with the run it joined (or the queued run it became), not as that run's input.
    const kept = !answer.ok ? [] : answer.steer ? (answer.replayed ? [] : staged.input) : keptWith(answer.run, answer.replayed);
    await releaseUnreferenced(env.MEDIA, scope, staged.written, kept);
  } catch (error) {
    // The answer stands (a 409 stays a 409); the leftovers are under the session's prefix.
    logKept(scope, staged.written.length, error);
  }
  return answer;
}

async function releaseIfNotRecorded(
  env: Env,
  scope: TurnScope,
  written: string[],
  keptWith: (run: { input: InputPart[] }) => InputPart[],
): Promise<void> {
  const identity = { tenant: scope.tenant, session_id: scope.session_id };
  try {
    const found = await callSession(env, scope.tenant, scope.session_id, (stub) => stub.getRun(identity, scope.run_id), {
      idempotent: true,
    });
    if (found.ok) await releaseUnreferenced(env.MEDIA, scope, written, keptWith(found.run));
    else await deleteMedia(env.MEDIA, scope, written);
  } catch (error) {
    // Unknown whether the run exists: keeping its media is safe; deleting the session removes them.
    logKept(scope, written.length, error);
  }
}

function logKept(scope: TurnScope, objects: number, error: unknown): void {
  const reason = errorMessage(error);
  log({ event: "media_kept", session_id: scope.session_id, run_id: scope.run_id, objects, reason });
}
