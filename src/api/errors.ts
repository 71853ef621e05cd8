import { HTTPException } from "hono/http-exception";
import { log } from "../core/log";
import { ApiError, errorMessage } from "../core/errors";

/** docs/api.md's error answers live in core/errors.ts (db/, media/ and session/ use them too); the api layer imports them from here. */
export * from "../core/errors";

/** Any thrown error as the ApiError it answers: a framework's 400/413/415 as docs/api.md's, anything else a 500 that is logged, never shown. */
export function asApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof HTTPException) {
    if (error.status === 415) {
      return new ApiError("invalid_request", "Content-Type must be application/json", {
        fields: [{ path: "content-type", message: "must be application/json" }],
      });
    }
    if (error.status === 400) {
      return new ApiError("invalid_request", error.message || "Bad request", {
        fields: [{ path: "body", message: error.message || "bad request" }],
      });
    }
    if (error.status === 413) return new ApiError("payload_too_large", "Request body is too large");
  }
  log({ event: "unhandled_error", message: errorMessage(error), error_type: error instanceof Error ? error.name : typeof error });
  return new ApiError("internal", "Internal error");
}
