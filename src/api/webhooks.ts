import { createRoute, z } from "@hono/zod-openapi";
import { CLIENT_ID, newId, nowIso } from "../core/ids";
import { errorMessage } from "../core/errors";
import { log } from "../core/log";
import { checkOutboundUrl } from "../core/url-guard";
import { CredentialError } from "../credentials";
import { findAgent } from "../db/agents";
import {
  deleteWebhook,
  findWebhook,
  insertWebhook,
  listDeliveries,
  listWebhooks,
  restartDelivery,
  type DeliveryRow,
  type WebhookRow,
} from "../db/webhooks";
import { newWebhookSecret, sealWebhookSecret, WEBHOOK_EVENT_TYPES, type WebhookMessage } from "../webhooks";
import { ApiError, invalidFields, notFound } from "./errors";
import { idempotentCreate, idempotencyKeyHeaders } from "./idempotency";
import { decodeCursor, listQuery, listSchema, page } from "./pagination";
import { authErrors, bodyErrors, errorResponses } from "./responses";
import { bearerSecurity, newRouter } from "./router";

const webhookCreateSchema = z
  .strictObject({
    url: z.string().min(1).max(2048).openapi({ example: "https://example.com/agentry-webhooks" }),
    events: z
      .array(z.enum(WEBHOOK_EVENT_TYPES))
      .min(1)
      .max(WEBHOOK_EVENT_TYPES.length)
      .refine((events) => new Set(events).size === events.length, "must not repeat an event type")
      .openapi({ example: ["run.completed", "run.failed"] }),
    agent_id: z
      .string()
      .regex(CLIENT_ID, "must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
      .nullable()
      .default(null)
      .openapi({ description: "Only this agent's runs; null (the default) = every agent of the tenant" }),
  })
  .openapi("WebhookCreate");

const webhookSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.enum(WEBHOOK_EVENT_TYPES)),
    agent_id: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi("Webhook");

const createdWebhookSchema = webhookSchema
  .extend({
    secret: z.string().nullable().openapi({
      description: "The signing secret (`whsec_…`); shown only in this answer (null when an Idempotency-Key retry replays it)",
    }),
  })
  .openapi("CreatedWebhook");

const deliverySchema = z
  .object({
    id: z.string().openapi({ description: "The `webhook-id` every attempt of this delivery sends" }),
    event_type: z.enum(WEBHOOK_EVENT_TYPES),
    run_id: z.string(),
    session_id: z.string(),
    attempts: z.number().int(),
    status: z
      .enum(["pending", "delivered", "failed", "dead"])
      .openapi({ description: "`failed`: the last attempt failed, another is scheduled" }),
    last_status_code: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "The receiver's last answer; null when it gave none (timeout, refused URL)" }),
    next_attempt_at: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi("WebhookDelivery");

const webhookIdParams = z.object({ id: z.string().openapi({ param: { name: "id", in: "path" } }) });
const deliveryParams = webhookIdParams.extend({
  delivery_id: z.string().openapi({ param: { name: "delivery_id", in: "path" } }),
});
const common = { tags: ["webhooks"], security: bearerSecurity };
const json = <T extends z.ZodType>(schema: T) => ({ "application/json": { schema } });

const createWebhookRoute = createRoute({
  operationId: "createWebhook",
  ...common,
  method: "post",
  path: "/webhooks",
  summary: "Subscribe a URL to run lifecycle events (its signing secret is shown only in this answer)",
  request: { headers: idempotencyKeyHeaders, body: { required: true, content: json(webhookCreateSchema) } },
  responses: {
    201: { description: "The webhook and its signing secret", content: json(createdWebhookSchema) },
    ...bodyErrors,
    500: { content: errorResponses[500].content, description: "The operator has not set a valid CREDENTIALS_KEY; nothing was stored" },
  },
});

const listWebhooksRoute = createRoute({
  operationId: "listWebhooks",
  ...common,
  method: "get",
  path: "/webhooks",
  summary: "List the tenant's webhooks, newest first",
  request: { query: listQuery({}) },
  responses: {
    200: { description: "A page of webhooks", content: json(listSchema(webhookSchema)) },
    400: errorResponses[400],
    ...authErrors,
  },
});

const getWebhookRoute = createRoute({
  operationId: "getWebhook",
  ...common,
  method: "get",
  path: "/webhooks/{id}",
  summary: "Read a webhook (without its secret)",
  request: { params: webhookIdParams },
  responses: { 200: { description: "The webhook", content: json(webhookSchema) }, 404: errorResponses[404], ...authErrors },
});

const deleteWebhookRoute = createRoute({
  operationId: "deleteWebhook",
  ...common,
  method: "delete",
  path: "/webhooks/{id}",
  summary: "Delete a webhook; its deliveries stop and are removed",
  request: { params: webhookIdParams },
  responses: { 204: { description: "Deleted" }, 404: errorResponses[404], ...authErrors },
});

const listDeliveriesRoute = createRoute({
  operationId: "listWebhookDeliveries",
  ...common,
  method: "get",
  path: "/webhooks/{id}/deliveries",
  summary: "List a webhook's deliveries and their attempts, newest first",
  request: { params: webhookIdParams, query: listQuery({}) },
  responses: {
    200: { description: "A page of deliveries", content: json(listSchema(deliverySchema)) },
    400: errorResponses[400],
    404: errorResponses[404],
    ...authErrors,
  },
});

const redeliverRoute = createRoute({
  operationId: "redeliverWebhookDelivery",
  ...common,
  method: "post",
  path: "/webhooks/{id}/deliveries/{delivery_id}/redeliver",
  summary: "Send a delivery again (same webhook-id), with a new retry schedule",
  request: { params: deliveryParams },
  responses: {
    202: { description: "Queued", content: json(z.object({ delivery_id: z.string() }).openapi("Redelivery")) },
    404: errorResponses[404],
    ...bodyErrors,
  },
});

const webhookOf = (row: WebhookRow): z.infer<typeof webhookSchema> => ({
  id: row.id,
  url: row.url,
  events: z.array(z.enum(WEBHOOK_EVENT_TYPES)).catch([]).parse(JSON.parse(row.events)),
  agent_id: row.agentId,
  created_at: row.createdAt,
});

const deliveryOf = (row: DeliveryRow): z.infer<typeof deliverySchema> => ({
  id: row.id,
  event_type: z.enum(WEBHOOK_EVENT_TYPES).parse(row.eventType),
  run_id: row.runId,
  session_id: row.sessionId,
  attempts: row.attempts,
  status: z.enum(["pending", "delivered", "failed", "dead"]).parse(row.status),
  last_status_code: row.lastStatusCode,
  next_attempt_at: row.status === "pending" || row.status === "failed" ? row.nextAttemptAt : null,
  created_at: row.createdAt,
});

/** `/v1/webhooks`: the tenant's lifecycle webhooks and their deliveries (docs/webhooks.md). */
export const webhookRoutes = newRouter()
  .openapi(createWebhookRoute, async (c) => {
    const body = c.req.valid("json");
    const { url, events, agent_id } = body;
    const urlProblem = checkOutboundUrl(url, c.env.ENVIRONMENT);
    if (urlProblem) throw invalidFields([{ path: "url", message: urlProblem }], `url ${urlProblem}`);
    const tenant = c.get("tenant");
    if (agent_id !== null && !(await findAgent(c.env.DB, tenant, agent_id))) {
      throw invalidFields([{ path: "agent_id", message: "names no agent of the tenant" }], `agent_id ${agent_id} names no agent`);
    }
    type Created = z.infer<typeof createdWebhookSchema>;
    const created = await idempotentCreate<Created>(c, body, async () => {
      const id = newId("wh");
      const secret = newWebhookSecret();
      let ciphertext: string;
      try {
        ciphertext = await sealWebhookSecret(c.env.CREDENTIALS_KEY, tenant, id, secret);
      } catch (error) {
        if (error instanceof CredentialError) throw new ApiError("internal", error.message);
        throw error;
      }
      const row: WebhookRow = { tenant, id, url, events: JSON.stringify(events), agentId: agent_id, ciphertext, createdAt: nowIso() };
      await insertWebhook(c.env.DB, row);
      // The secret is shown once: a retry with the same Idempotency-Key gets `secret: null`.
      return { body: { ...webhookOf(row), secret }, stored: { ...webhookOf(row), secret: null } };
    });
    return c.json(created, 201);
  })
  .openapi(listWebhooksRoute, async (c) => {
    const { limit, cursor } = c.req.valid("query");
    const rows = await listWebhooks(c.env.DB, c.get("tenant"), limit + 1, decodeCursor(cursor));
    return c.json(page(rows, limit, webhookOf), 200);
  })
  .openapi(getWebhookRoute, async (c) => {
    const { id } = c.req.valid("param");
    const row = await findWebhook(c.env.DB, c.get("tenant"), id);
    if (!row) throw notFound("webhook", id);
    return c.json(webhookOf(row), 200);
  })
  .openapi(deleteWebhookRoute, async (c) => {
    const { id } = c.req.valid("param");
    if (!(await deleteWebhook(c.env.DB, c.get("tenant"), id))) throw notFound("webhook", id);
    return c.body(null, 204);
  })
  .openapi(listDeliveriesRoute, async (c) => {
    const { id } = c.req.valid("param");
    const { limit, cursor } = c.req.valid("query");
    const tenant = c.get("tenant");
    if (!(await findWebhook(c.env.DB, tenant, id))) throw notFound("webhook", id);
    const rows = await listDeliveries(c.env.DB, tenant, id, limit + 1, decodeCursor(cursor));
    return c.json(page(rows, limit, deliveryOf), 200);
  })
  .openapi(redeliverRoute, async (c) => {
    const { id, delivery_id } = c.req.valid("param");
    const tenant = c.get("tenant");
    const attempts = await restartDelivery(c.env.DB, tenant, id, delivery_id, nowIso());
    if (attempts === null) throw notFound("delivery", delivery_id);
    const message: WebhookMessage = { tenant, delivery_id, attempt: attempts };
    try {
      await c.env.WEBHOOKS.send(message);
    } catch (error) {
      // The delivery is pending and due: the Cron sweep sends it.
      log({ event: "webhook_enqueue_failed", delivery_ids: [delivery_id], message: errorMessage(error) });
    }
    return c.json({ delivery_id }, 202);
  });
