import { createRoute, z } from "@hono/zod-openapi";
import { CLIENT_ID } from "../core/ids";
import { findSession, listSessions } from "../db/sessions";
import { headOf, isActive, queuedIdsOf, sumMetrics, type SessionView } from "../session";
import { notFound } from "./errors";
import { decodeCursor, listQuery, listSchema, page } from "./pagination";
import { findAgent } from "../db/agents";
import { authErrors, errorResponses } from "./responses";
import { bearerSecurity, newRouter } from "./router";
import { metricsSchema } from "../session";
import { callSession, unwrap } from "../session/client";

const sessionParams = z.object({ session_id: z.string().regex(CLIENT_ID, "not a valid session id") });
const errors = { 400: errorResponses[400], 404: errorResponses[404], ...authErrors };

const sessionSchema = z
  .object({
    id: z.string(),
    agent_id: z.string(),
    active_run_id: z.string().nullable(),
    queued_run_ids: z
      .array(z.string())
      .openapi({ description: 'Runs waiting for the session\'s turn (`on_busy: "enqueue"`), first in line first' }),
    head_run_id: z.string().nullable(),
    run_count: z.number().int(),
    metrics: metricsSchema,
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Session");

const blockSchema = z.record(z.string(), z.unknown()).openapi("Block");
const messageSchema = z
  .object({
    index: z.number(),
    run_id: z.string(),
    role: z.enum(["user", "assistant", "tool"]),
    content: z.array(blockSchema),
    created_at: z.string(),
  })
  .openapi("Message");

const listRoute = createRoute({
  operationId: "listSessions",
  summary: "List sessions, newest first",
  method: "get",
  path: "/sessions",
  tags: ["sessions"],
  security: bearerSecurity,
  request: { query: listQuery({ agent_id: z.string().optional() }) },
  responses: {
    200: { description: "Sessions, newest first", content: { "application/json": { schema: listSchema(sessionSchema) } } },
    ...errors,
  },
});

const getRoute = createRoute({
  operationId: "getSession",
  summary: "Read a session",
  method: "get",
  path: "/sessions/{session_id}",
  tags: ["sessions"],
  security: bearerSecurity,
  request: { params: sessionParams },
  responses: { 200: { description: "The session", content: { "application/json": { schema: sessionSchema } } }, ...errors },
});

const transcriptRoute = createRoute({
  operationId: "getTranscript",
  method: "get",
  path: "/sessions/{session_id}/transcript",
  tags: ["sessions"],
  summary: "The provider-neutral messages the next turn will send",
  security: bearerSecurity,
  request: {
    params: sessionParams,
    query: z.strictObject({
      run_id: z.string().regex(CLIENT_ID, "not a valid run id").optional(),
      full: z
        .enum(["true", "false"])
        .optional()
        .openapi({ description: "true: every message of the branch, without replacing compacted ones by their summary" }),
    }),
  },
  responses: {
    200: { description: "Messages in order", content: { "application/json": { schema: z.object({ data: z.array(messageSchema) }) } } },
    ...errors,
  },
});

const deleteRoute = createRoute({
  operationId: "deleteSession",
  method: "delete",
  path: "/sessions/{session_id}",
  tags: ["sessions"],
  summary: "Cancel the session's run and delete all of its data",
  security: bearerSecurity,
  request: { params: sessionParams },
  responses: { 204: { description: "Deleted" }, ...errors },
});

const compactRoute = createRoute({
  operationId: "compactSession",
  method: "post",
  path: "/sessions/{session_id}/compact",
  tags: ["sessions"],
  summary: "Summarise the session's older messages now; later turns send the summary instead",
  security: bearerSecurity,
  request: { params: sessionParams },
  responses: {
    200: {
      description: "The compaction (summary null and 0 messages when there was too little to compact)",
      content: {
        "application/json": {
          schema: z.object({
            summary: z.string().nullable(),
            compacted_messages: z.number().int(),
            tokens_before: z.number().int(),
            tokens_after: z.number().int(),
          }),
        },
      },
    },
    409: { ...errorResponses[409], description: "A run of the session is in progress" },
    502: errorResponses[502],
    ...errors,
  },
});

/** Looks the session up in the tenant's mirror first: a foreign or unknown session is 404. */
async function ownedSession(env: { DB: D1Database }, tenant: string, id: string) {
  const row = await findSession(env.DB, tenant, id);
  if (!row) throw notFound("Session", id);
  return row;
}

export const sessionRoutes = newRouter()
  .openapi(listRoute, async (c) => {
    const query = c.req.valid("query");
    const rows = await listSessions(c.env.DB, c.get("tenant"), query.agent_id, decodeCursor(query.cursor), query.limit);
    return c.json(
      page(
        rows,
        query.limit,
        (row): SessionView => ({
          id: row.id,
          agent_id: row.agentId,
          active_run_id: row.runs.find((r) => isActive(r.status))?.id ?? null,
          queued_run_ids: queuedIdsOf(row.runs),
          head_run_id: headOf(row.runs)?.id ?? null,
          run_count: row.runs.length,
          metrics: sumMetrics(row.runs.map((r) => r.metrics)),
          created_at: row.createdAt,
          updated_at: row.updatedAt,
        }),
      ),
      200,
    );
  })
  .openapi(getRoute, async (c) => {
    const { session_id } = c.req.valid("param");
    const tenant = c.get("tenant");
    await ownedSession(c.env, tenant, session_id);
    const result = await callSession(c.env, tenant, session_id, (stub) => stub.getSession({ tenant, session_id }), {
      idempotent: true,
    });
    return c.json(unwrap(result).session, 200);
  })
  .openapi(transcriptRoute, async (c) => {
    const { session_id } = c.req.valid("param");
    const { run_id, full } = c.req.valid("query");
    const tenant = c.get("tenant");
    await ownedSession(c.env, tenant, session_id);
    const result = await callSession(
      c.env,
      tenant,
      session_id,
      (stub) => stub.getTranscript({ tenant, session_id }, run_id ?? null, full === "true"),
      {
        idempotent: true,
      },
    );
    return c.json({ data: unwrap(result).messages }, 200);
  })
  .openapi(deleteRoute, async (c) => {
    const { session_id } = c.req.valid("param");
    const tenant = c.get("tenant");
    await ownedSession(c.env, tenant, session_id);
    const result = await callSession(c.env, tenant, session_id, (stub) => stub.deleteSession({ tenant, session_id }));
    unwrap(result);
    return c.body(null, 204);
  })
  .openapi(compactRoute, async (c) => {
    const { session_id } = c.req.valid("param");
    const tenant = c.get("tenant");
    const session = await ownedSession(c.env, tenant, session_id);
    const agent = await findAgent(c.env.DB, tenant, session.agentId);
    if (!agent) throw notFound("Agent", session.agentId);
    const result = await callSession(c.env, tenant, session_id, (stub) => stub.compactSession({ tenant, session_id }, agent));
    return c.json(unwrap(result).report, 200);
  });
