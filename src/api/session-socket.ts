import { createRoute, z } from "@hono/zod-openapi";
import { CLIENT_ID } from "../core/ids";
import { findSession } from "../db/sessions";
import { upgradeRequest } from "../session";
import { invalidFields, notFound, type FieldError } from "./errors";
import { authErrors, errorResponses } from "./responses";
import { bearerSecurity, newRouter } from "./router";
import { callSession } from "../session/client";

const socketRoute = createRoute({
  operationId: "connectSessionSocket",
  method: "get",
  path: "/sessions/{session_id}/ws",
  tags: ["sessions"],
  summary: "WebSocket: every event of every run of the session",
  description:
    'Each event arrives as one text message, the event envelope as JSON. Send `{"type":"subscribe","after":N}` to ' +
    'replay the stored events after seq N and continue live; `{"type":"ping"}` is answered `{"type":"pong"}`. ' +
    'A bad message is answered `{"type":"error","error":{…}}` and the socket stays open. docs/streaming.md.',
  security: bearerSecurity,
  request: {
    params: z.object({ session_id: z.string().regex(CLIENT_ID, "not a valid session id") }),
    query: z.strictObject({
      token: z.string().optional().openapi({ description: "The bearer token, for browsers' WebSocket (which cannot set headers)" }),
    }),
  },
  responses: {
    101: { description: "Switching Protocols: the WebSocket is open" },
    400: errorResponses[400],
    404: errorResponses[404],
    ...authErrors,
  },
});

/** A Sec-WebSocket-Key is 16 bytes in base64 (RFC 6455, 4.1): 22 characters and "==". */
const WEBSOCKET_KEY = /^[A-Za-z0-9+/]{22}==$/;

/** The RFC 6455 handshake headers an upgrade must carry, checked before the object accepts it. */
function handshakeProblem(headers: Headers): FieldError | null {
  if (!WEBSOCKET_KEY.test(headers.get("sec-websocket-key")?.trim() ?? "")) {
    return { path: "headers.sec-websocket-key", message: "must be 16 random bytes in base64 (RFC 6455)" };
  }
  if (headers.get("sec-websocket-version")?.trim() !== "13") {
    return { path: "headers.sec-websocket-version", message: "must be 13" };
  }
  return null;
}

export const sessionSocketRoutes = newRouter().openapi(socketRoute, async (c) => {
  const { session_id } = c.req.valid("param");
  const tenant = c.get("tenant");
  if (!(await findSession(c.env.DB, tenant, session_id))) throw notFound("Session", session_id);
  if (c.req.header("upgrade")?.toLowerCase() !== "websocket") {
    throw invalidFields([{ path: "headers.upgrade", message: "must be websocket" }], "Expected a WebSocket upgrade");
  }
  const handshake = handshakeProblem(c.req.raw.headers);
  if (handshake) throw invalidFields([handshake], `Not a valid WebSocket upgrade: ${handshake.path} ${handshake.message}`);
  // The object accepts the socket itself (ctx.acceptWebSocket): one accepted here could not hibernate.
  const identity = { tenant, session_id };
  return callSession(c.env, tenant, session_id, (stub) => stub.fetch(upgradeRequest(c.req.raw, identity)), { idempotent: true });
});
