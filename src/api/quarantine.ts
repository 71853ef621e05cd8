import { createRoute, z } from "@hono/zod-openapi";
import { countQuarantined, listQuarantined } from "../db/quarantine";
import { requireAdmin } from "./auth";
import { pageQuery } from "./pagination";
import { authErrors, errorResponses } from "./responses";
import { bearerSecurity, newRouter } from "./router";

const quarantinedSchema = z
  .object({
    tenant: z.string(),
    session_id: z.string(),
    id: z.number().int().openapi({ description: "The entry's id in the session object's quarantine" }),
    statements: z.number().int().openapi({ description: "How many mirror statements the entry holds" }),
    error: z.string().openapi({ description: "D1's error (at most 500 characters)" }),
    at: z.string().openapi({ description: "When the entry was set aside (ISO 8601)" }),
  })
  .openapi("QuarantinedStatement");

const listQuarantineRoute = createRoute({
  operationId: "listQuarantine",
  middleware: [requireAdmin],
  tags: ["health"],
  security: bearerSecurity,
  method: "get",
  path: "/quarantine",
  summary: "List mirror statements D1 rejected for good, newest first (admin only)",
  description:
    "A session object copies its ledger to D1 through an outbox; a statement D1 keeps rejecting while it answers other queries is set aside in the object (kept, never lost) so the rest goes on. Each such entry is listed here.",
  request: { query: z.strictObject({ limit: pageQuery.limit }) },
  responses: {
    200: {
      description: "The newest entries and how many there are",
      content: { "application/json": { schema: z.object({ data: z.array(quarantinedSchema), total: z.number().int() }) } },
    },
    400: errorResponses[400],
    403: errorResponses[403],
    ...authErrors,
  },
});

/** `/v1/quarantine`: what the D1 mirror set aside (src/session/store/mirror.ts), for the operator. */
export const quarantineRoutes = newRouter().openapi(listQuarantineRoute, async (c) => {
  const { limit } = c.req.valid("query");
  const [rows, total] = await Promise.all([listQuarantined(c.env.DB, limit), countQuarantined(c.env.DB)]);
  const data = rows.map((r) => ({
    tenant: r.tenant,
    session_id: r.sessionId,
    id: r.id,
    statements: r.statements,
    error: r.error,
    at: r.at,
  }));
  return c.json({ data, total }, 200);
});
