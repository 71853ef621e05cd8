import { createRoute, z } from "@hono/zod-openapi";
import { CLIENT_ID, newId, nowIso } from "../core/ids";
import { deleteKey, insertKey, listKeys } from "../db/keys";
import type { KeyRow } from "../db/keys";
import { hashToken, requireAdmin } from "./auth";
import { ApiError, notFound } from "./errors";
import { idempotentCreate, idempotencyKeyHeaders } from "./idempotency";
import { decodeCursor, listQuery, listSchema, page } from "./pagination";
import { authErrors, bodyErrors, errorResponses } from "./responses";
import { bearerSecurity, newRouter } from "./router";
import { encodeBase64Url } from "../core/base64";

const keyCreateSchema = z
  .strictObject({
    tenant: z.string().regex(CLIENT_ID, "must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$").openapi({ example: "acme" }),
    name: z.string().min(1).max(128).openapi({ example: "ci" }),
  })
  .openapi("KeyCreate");

const keySchema = z.object({ id: z.string(), tenant: z.string(), name: z.string(), created_at: z.string() }).openapi("Key");

const createdKeySchema = keySchema
  .extend({
    key: z
      .string()
      .nullable()
      .openapi({ description: "The bearer token; shown only in this answer (null when an Idempotency-Key retry replays it)" }),
  })
  .openapi("CreatedKey");

const keyIdParams = z.object({ id: z.string().openapi({ param: { name: "id", in: "path" } }) });

const adminOnly = { middleware: [requireAdmin], tags: ["keys"], security: bearerSecurity };

const createKey = createRoute({
  operationId: "createKey",
  ...adminOnly,
  method: "post",
  path: "/keys",
  summary: "Create a tenant API key (admin only)",
  request: { headers: idempotencyKeyHeaders, body: { required: true, content: { "application/json": { schema: keyCreateSchema } } } },
  responses: {
    201: { description: "The key; `key` is shown only here", content: { "application/json": { schema: createdKeySchema } } },
    403: errorResponses[403],
    409: errorResponses[409],
    ...bodyErrors,
  },
});

const listKeysRoute = createRoute({
  operationId: "listKeys",
  ...adminOnly,
  method: "get",
  path: "/keys",
  summary: "List API keys, newest first (admin only)",
  request: { query: listQuery({ tenant: z.string().optional() }) },
  responses: {
    200: { description: "A page of keys (never the key or its hash)", content: { "application/json": { schema: listSchema(keySchema) } } },
    400: errorResponses[400],
    403: errorResponses[403],
    ...authErrors,
  },
});

const deleteKeyRoute = createRoute({
  operationId: "deleteKey",
  ...adminOnly,
  method: "delete",
  path: "/keys/{id}",
  summary: "Delete an API key; it stops authenticating at once (admin only)",
  request: { params: keyIdParams },
  responses: { 204: { description: "Deleted" }, 403: errorResponses[403], 404: errorResponses[404], ...authErrors },
});

/** A key token: "agk_" and 32 random bytes, base64url. */
function newKeyToken(): string {
  return `agk_${encodeBase64Url(crypto.getRandomValues(new Uint8Array(32)))}`;
}

const shown = (row: KeyRow) => ({ id: row.id, tenant: row.tenant, name: row.name, created_at: row.createdAt });

/** `/v1/keys`: tenant keys, managed by the operator's ADMIN_TOKEN only (docs/api.md, Authentication). */
export const keyRoutes = newRouter()
  .openapi(createKey, async (c) => {
    const body = c.req.valid("json");
    const { tenant, name } = body;
    const created = await idempotentCreate<{ id: string; tenant: string; name: string; created_at: string; key: string | null }>(
      c,
      body,
      async () => {
        const key = newKeyToken();
        const row: KeyRow = { id: newId("key"), tenant, name, keyHash: await hashToken(key), createdAt: nowIso() };
        if (!(await insertKey(c.env.DB, row))) {
          throw new ApiError("already_exists", `Tenant ${tenant} already has a key named ${name}`);
        }
        // The secret is shown once: a retry with the same Idempotency-Key gets `key: null`.
        return { body: { ...shown(row), key }, stored: { ...shown(row), key: null } };
      },
    );
    return c.json(created, 201);
  })
  .openapi(listKeysRoute, async (c) => {
    const { limit, cursor, tenant } = c.req.valid("query");
    const rows = await listKeys(c.env.DB, tenant, limit + 1, decodeCursor(cursor));
    return c.json(page(rows, limit, shown), 200);
  })
  .openapi(deleteKeyRoute, async (c) => {
    const { id } = c.req.valid("param");
    if (!(await deleteKey(c.env.DB, id))) throw notFound("key", id);
    return c.body(null, 204);
  });
