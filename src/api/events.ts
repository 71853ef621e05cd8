import { createRoute, z } from "@hono/zod-openapi";
import { CLIENT_ID } from "../core/ids";
import { ownedRun } from "../db/runs";
import { runEventSchema } from "../session";
import { eventStreamContent } from "./run-schemas";
import { invalidFields } from "./errors";
import { authErrors, errorResponses } from "./responses";
import { bearerSecurity, newRouter } from "./router";
import { callSession, unwrap } from "../session/client";

/** Headers of every SSE answer; `x-accel-buffering` keeps proxies from holding frames back. */
export const SSE_HEADERS = { "content-type": "text/event-stream", "cache-control": "no-cache", "x-accel-buffering": "no" };

const runParams = z.object({
  agent_id: z.string().regex(CLIENT_ID, "not a valid agent id"),
  run_id: z.string().regex(CLIENT_ID, "not a valid run id"),
});

const eventsRoute = createRoute({
  operationId: "listRunEvents",
  method: "get",
  path: "/agents/{agent_id}/runs/{run_id}/events",
  tags: ["runs"],
  summary: "A run's stored events; with Accept: text/event-stream, replayed then followed live",
  description:
    "`after` (or the `Last-Event-ID` header, which wins) skips the events up to that seq. As SSE, the stream " +
    "closes after the terminal event of the run's current stretch (run_completed, run_error, run_cancelled or " +
    "run_paused), or right after the replay when that stretch had already ended.",
  security: bearerSecurity,
  request: {
    params: runParams,
    query: z.strictObject({
      after: z.coerce.number().int().min(0).optional(),
      token: z.string().optional().openapi({ description: "The bearer token, for EventSource (which cannot set headers)" }),
    }),
    headers: z.object({
      "last-event-id": z.string().optional().openapi({
        description: "The last seq the client saw (EventSource sends it on reconnect); wins over `after` and asks for SSE",
      }),
    }),
  },
  responses: {
    200: {
      description: "The stored events after `after`, or their SSE stream",
      content: {
        "application/json": { schema: z.object({ data: z.array(runEventSchema) }) },
        ...eventStreamContent,
      },
    },
    400: errorResponses[400],
    404: errorResponses[404],
    ...authErrors,
  },
});

/** `Last-Event-ID` as a seq: EventSource sends back the last `id:` it saw when it reconnects. */
function lastEventId(request: Request): number | null {
  const header = request.headers.get("last-event-id");
  if (header === null) return null;
  if (!/^\d{1,15}$/.test(header.trim())) {
    throw invalidFields([{ path: "headers.last-event-id", message: "must be an event seq (a non-negative integer)" }]);
  }
  return Number(header.trim());
}

export const eventRoutes = newRouter().openapi(eventsRoute, async (c) => {
  const { agent_id, run_id } = c.req.valid("param");
  const resumeFrom = lastEventId(c.req.raw);
  const after = resumeFrom ?? c.req.valid("query").after ?? 0;
  const tenant = c.get("tenant");
  const stored = await ownedRun(c.env.DB, tenant, agent_id, run_id);
  const identity = { tenant, session_id: stored.session_id };
  // Only SSE clients send Last-Event-ID, so it asks for a stream as much as the Accept header does.
  const stream = resumeFrom !== null || (c.req.header("accept") ?? "").includes("text/event-stream");
  if (stream) {
    const result = await callSession(c.env, tenant, stored.session_id, (stub) => stub.watchEvents(identity, run_id, after), {
      idempotent: true,
    });
    return new Response(unwrap(result).stream, { headers: SSE_HEADERS });
  }
  const result = await callSession(c.env, tenant, stored.session_id, (stub) => stub.readEvents(identity, run_id, after), {
    idempotent: true,
  });
  return c.json({ data: unwrap(result).events }, 200);
});
