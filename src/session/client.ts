import { ApiError } from "../core/errors";
import type { Result, SessionFailure } from "../run-model/session-protocol";
import type { SessionObject } from "./object/session-object";

/**
 * The object's RPC methods as the Worker calls them. RPC stubs type results that hold
 * `unknown` (tool arguments, outputs) as unknown; the object returns exactly these types.
 */
export type SessionApi = Pick<
  SessionObject,
  | "startRun"
  | "turnRefusal"
  | "continueRun"
  | "cancelRun"
  | "getRun"
  | "waitForRun"
  | "getSession"
  | "getTranscript"
  | "deleteSession"
  | "executeRun"
  | "failPendingRun"
  | "sweepRun"
  | "getCheckpoints"
  | "compactSession"
  | "readEvents"
  | "watchEvents"
  | "fetch"
>;

function isObjectReset(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { durableObjectReset?: unknown }).durableObjectReset === true;
}

/**
 * Calls the session's Durable Object (named `tenant/session_id`; client ids never contain
 * `/`) on a fresh stub: a stub whose object was reset rejects every later call. A call that
 * is safe to repeat (`idempotent`) is retried once when the object was reset under it; a
 * turn is never sent twice.
 */
export async function callSession<T>(
  env: { SESSION: DurableObjectNamespace<SessionObject> },
  tenant: string,
  sessionId: string,
  call: (session: SessionApi) => Promise<T>,
  options: { idempotent: boolean } = { idempotent: false },
): Promise<T> {
  const stubOf = () => env.SESSION.get(env.SESSION.idFromName(`${tenant}/${sessionId}`)) as unknown as SessionApi;
  try {
    return await call(stubOf());
  } catch (error) {
    if (!options.idempotent || !isObjectReset(error)) throw error;
    return call(stubOf());
  }
}

/** Turns an object's refusal into docs/api.md's error answer. */
export function failureToError(failure: SessionFailure): ApiError {
  const headers: Record<string, string> = failure.type === "session_busy" ? { "Retry-After": "1" } : {};
  const resetsAt = failure.type === "budget_exceeded" ? failure.details?.resets_at : null;
  // A spent budget: until its period resets (a `total` budget never does: no header, raise it with PATCH).
  if (typeof resetsAt === "string") headers["Retry-After"] = String(Math.max(1, Math.ceil((Date.parse(resetsAt) - Date.now()) / 1000)));
  return new ApiError(failure.type, failure.message, failure.details ?? {}, headers);
}

/** The value of a successful result, or the error it carries thrown as an ApiError. */
export function unwrap<T extends object>(result: Result<T>): T {
  if (!result.ok) throw failureToError(result.error);
  return result;
}
