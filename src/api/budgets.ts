import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { type Budget, type BudgetPatch, ledgerOf, type NewBudget } from "../budgets";
import { CLIENT_ID, newId } from "../core/ids";
import { findAgent } from "../db/agents";
import { findSession } from "../db/sessions";
import { assertNoProblems, type FieldError, invalidFields, notFound } from "./errors";
import { idempotentCreate, idempotencyKeyHeaders } from "./idempotency";
import { decodeCursor, encodeCursor, listQuery, listSchema } from "./pagination";
import { authErrors, bodyErrors, errorResponses } from "./responses";
import { type AppEnv, bearerSecurity, newRouter } from "./router";

const maxCost = z.number().min(0).max(1e12).nullable().optional().openapi({ description: "USD per period; at least one limit is set" });
const maxTokens = z
  .number()
  .int()
  .min(0)
  .max(Number.MAX_SAFE_INTEGER)
  .nullable()
  .optional()
  .openapi({ description: "total_tokens (input + output) per period; at least one limit is set" });

const budgetCreateSchema = z
  .strictObject({
    scope: z.enum(["tenant", "agent", "session"]).openapi({ description: "Whose use is capped: the tenant's, an agent's or a session's" }),
    scope_id: z
      .string()
      .regex(CLIENT_ID, "must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
      .optional()
      .openapi({ description: "The agent's or session's id; none for a tenant budget", example: "support-bot" }),
    period: z.enum(["day", "month", "total"]).openapi({ description: "A UTC day, a UTC month, or since the budget's creation" }),
    max_cost_usd: maxCost,
    max_tokens: maxTokens,
  })
  .openapi("BudgetCreate");

const budgetPatchSchema = z.strictObject({ max_cost_usd: maxCost, max_tokens: maxTokens }).openapi("BudgetPatch");

const budgetSchema = z
  .object({
    id: z.string().openapi({ example: "bdg_0mh2x9k1a7q3c8w2e5r0" }),
    scope: z.enum(["tenant", "agent", "session"]),
    scope_id: z.string().nullable(),
    period: z.enum(["day", "month", "total"]),
    max_cost_usd: z.number().nullable(),
    max_tokens: z.number().int().nullable(),
    used_cost_usd: z.number().openapi({ description: "Spent in the current period (model calls of unknown price count 0)" }),
    used_tokens: z.number().int().openapi({ description: "Sum of total_tokens in the current period" }),
    resets_at: z.string().nullable().openapi({ description: "When the current period ends (UTC); null for total" }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Budget");

const budgetIdParams = z.object({
  id: z
    .string()
    .max(128)
    .openapi({ param: { name: "id", in: "path" } }),
});
const common = { tags: ["budgets"], security: bearerSecurity };
const budgetContent = { "application/json": { schema: budgetSchema } };

const createBudget = createRoute({
  operationId: "createBudget",
  ...common,
  method: "post",
  path: "/budgets",
  summary: "Create a spend budget on the tenant, an agent or a session",
  request: { headers: idempotencyKeyHeaders, body: { required: true, content: { "application/json": { schema: budgetCreateSchema } } } },
  responses: {
    201: { description: "The budget with its use so far in the current period", content: budgetContent },
    404: errorResponses[404],
    409: errorResponses[409],
    ...bodyErrors,
  },
});

const listBudgets = createRoute({
  operationId: "listBudgets",
  ...common,
  method: "get",
  path: "/budgets",
  summary: "List the tenant's budgets with their use, newest first",
  request: { query: listQuery({}) },
  responses: {
    200: { description: "A page of budgets", content: { "application/json": { schema: listSchema(budgetSchema) } } },
    400: errorResponses[400],
    ...authErrors,
  },
});

const getBudget = createRoute({
  operationId: "getBudget",
  ...common,
  method: "get",
  path: "/budgets/{id}",
  summary: "A budget with its use in the current period",
  request: { params: budgetIdParams },
  responses: { 200: { description: "The budget", content: budgetContent }, 404: errorResponses[404], ...authErrors },
});

const updateBudget = createRoute({
  operationId: "updateBudget",
  ...common,
  method: "patch",
  path: "/budgets/{id}",
  summary: "Change a budget's limits (null removes one; one must remain); binds the next model call",
  request: { params: budgetIdParams, body: { required: true, content: { "application/json": { schema: budgetPatchSchema } } } },
  responses: { 200: { description: "The budget", content: budgetContent }, 404: errorResponses[404], ...bodyErrors },
});

const deleteBudget = createRoute({
  operationId: "deleteBudget",
  ...common,
  method: "delete",
  path: "/budgets/{id}",
  summary: "Delete a budget; the use it counted stays counted for the others",
  request: { params: budgetIdParams },
  responses: { 204: { description: "Deleted" }, 404: errorResponses[404], ...authErrors },
});

/** Both limits absent or null: a budget that caps nothing. */
const noLimit = (b: { max_cost_usd?: number | null; max_tokens?: number | null }): FieldError[] =>
  (b.max_cost_usd ?? null) === null && (b.max_tokens ?? null) === null
    ? [{ path: "max_cost_usd", message: "a budget sets max_cost_usd, max_tokens or both" }]
    : [];

/** The scope's id names the tenant's own agent or session (404 otherwise); a tenant budget has none. */
async function checkScope(c: Context<AppEnv>, scope: NewBudget["scope"], scopeId: string | undefined): Promise<void> {
  if (scope === "tenant") {
    assertNoProblems(scopeId === undefined ? [] : [{ path: "scope_id", message: "a tenant budget has no scope_id" }]);
    return;
  }
  if (scopeId === undefined) assertNoProblems([{ path: "scope_id", message: `required for an ${scope} budget` }]);
  const id = scopeId ?? "";
  const tenant = c.get("tenant");
  const found = scope === "agent" ? await findAgent(c.env.DB, tenant, id) : await findSession(c.env.DB, tenant, id);
  if (!found) throw notFound(scope, id);
}

const ledger = (c: Context<AppEnv>) => ledgerOf(c.env, c.get("tenant"));

/** The budget schema, for `GET /v1/usage`'s `budgets`. */
export { budgetSchema };

/** `/v1/budgets` (docs/budgets.md): kept in the tenant's ledger, which checks them before every model call. */
export const budgetRoutes = newRouter()
  .openapi(createBudget, async (c) => {
    const body = c.req.valid("json");
    assertNoProblems(noLimit(body));
    await checkScope(c, body.scope, body.scope_id);
    const created = await idempotentCreate<Budget>(c, body, async () => {
      const answer = await ledger(c).createBudget({
        id: newId("bdg"),
        scope: body.scope,
        scope_id: body.scope_id ?? null,
        period: body.period,
        max_cost_usd: body.max_cost_usd ?? null,
        max_tokens: body.max_tokens ?? null,
      });
      if ("problem" in answer) throw invalidFields([{ path: "body", message: answer.problem }], answer.problem);
      return { body: answer.budget };
    });
    return c.json(created, 201);
  })
  .openapi(listBudgets, async (c) => {
    const { limit, cursor } = c.req.valid("query");
    const rows = await ledger(c).listBudgets(limit + 1, decodeCursor(cursor));
    const shown = rows.slice(0, limit);
    const last = shown[shown.length - 1];
    const next = rows.length > limit && last ? encodeCursor({ createdAt: last.created_at, id: last.id }) : null;
    return c.json({ data: shown, next_cursor: next }, 200);
  })
  .openapi(getBudget, async (c) => {
    const { id } = c.req.valid("param");
    const budget = await ledger(c).getBudget(id);
    if (!budget) throw notFound("budget", id);
    return c.json(budget, 200);
  })
  .openapi(updateBudget, async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    // Only the fields sent: an absent one is kept, a null one removed.
    const patch: BudgetPatch = {};
    if (body.max_cost_usd !== undefined) patch.max_cost_usd = body.max_cost_usd;
    if (body.max_tokens !== undefined) patch.max_tokens = body.max_tokens;
    const updated = await ledger(c).updateBudget(id, patch);
    if (!updated) throw notFound("budget", id);
    if ("problem" in updated) throw invalidFields([{ path: "max_cost_usd", message: updated.problem }], updated.problem);
    return c.json(updated.budget, 200);
  })
  .openapi(deleteBudget, async (c) => {
    const { id } = c.req.valid("param");
    if (!(await ledger(c).deleteBudget(id))) throw notFound("budget", id);
    return c.body(null, 204);
  });
