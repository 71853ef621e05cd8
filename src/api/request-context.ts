import { createMiddleware } from "hono/factory";
import { newId } from "../core/ids";
import { withLogContext } from "../core/log";
import type { AppEnv } from "./router";

/** A caller's own request id is kept when it is short and plain (it goes into log lines). */
const CALLER_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Gives every request an id, answered in `X-Request-Id` and carried by every log line the
 * request causes in the Worker (core/log.ts). A caller's `X-Request-Id` is kept when plain.
 */
export const requestContext = createMiddleware<AppEnv>(async (c, next) => {
  const offered = c.req.header("x-request-id");
  const requestId = offered && CALLER_ID.test(offered) ? offered : newId("req");
  await withLogContext({ request_id: requestId }, async () => {
    await next();
  });
  try {
    c.header("X-Request-Id", requestId);
  } catch {
    // A WebSocket upgrade answered by the session's object has immutable headers.
  }
});
