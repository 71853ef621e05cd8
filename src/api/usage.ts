import { createRoute, z } from "@hono/zod-openapi";
import { CLIENT_ID } from "../core/ids";
import { listUsage } from "../db/usage";
import { addDays, utcDate } from "../maintenance/usage-rollup";
import { invalidFields } from "./errors";
import { ledgerOf, MAX_BUDGETS } from "../budgets";
import { budgetSchema } from "./budgets";
import { authErrors, errorResponses } from "./responses";
import { bearerSecurity, newRouter } from "./router";

/** Without `from`, the 30 days that end on `to` (both included). */
const DEFAULT_DAYS = 30;
/** The longest range, both ends included: a leap year. */
const MAX_DAYS = 366;
/** More rows than this is a 400 asking for a narrower query, never a silently cut answer. */
const MAX_ROWS = 10_000;

const isoDate = z.iso.date();
/** An empty value (`?agent_id=`, as docs/api.md writes the route) means the parameter is absent. */
const dateParam = z
  .string()
  .refine((v) => v === "" || isoDate.safeParse(v).success, "must be a calendar date YYYY-MM-DD")
  .optional();

const usageQuery = z.strictObject({
  from: dateParam.openapi({
    description: `First day (UTC), included; default: ${DEFAULT_DAYS - 1} days before \`to\``,
    example: "2026-01-01",
  }),
  to: dateParam.openapi({ description: "Last day (UTC), included; default: today", example: "2026-01-31" }),
  agent_id: z
    .string()
    .refine((v) => v === "" || CLIENT_ID.test(v), "must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
    .optional()
    .openapi({ description: "Only this agent's rows" }),
});

const usageDaySchema = z
  .object({
    date: z.string().openapi({ example: "2026-01-31" }),
    agent_id: z.string(),
    runs: z.number().int(),
    input_tokens: z.number().int(),
    output_tokens: z.number().int(),
    cache_read_tokens: z.number().int(),
    cache_write_tokens: z.number().int(),
    cost_usd: z.number().nullable().openapi({ description: "Sum of the runs' known costs; null when none was known" }),
  })
  .openapi("UsageDay");

const usage = createRoute({
  operationId: "getUsage",
  method: "get",
  path: "/usage",
  tags: ["usage"],
  summary: "Daily usage of the tenant, per agent (written by the Cron roll-up)",
  security: bearerSecurity,
  request: { query: usageQuery },
  responses: {
    200: {
      description:
        "Rows by date, then agent id; days without runs have no row. `budgets`: each of the tenant's budgets with its use in its current period (docs/budgets.md), whatever the dates asked",
      content: { "application/json": { schema: z.object({ data: z.array(usageDaySchema), budgets: z.array(budgetSchema) }) } },
    },
    400: errorResponses[400],
    ...authErrors,
  },
});

const dayNumber = (date: string) => Date.parse(`${date}T00:00:00Z`) / 86_400_000;

/** `GET /v1/usage`: the caller's tenant's `usage_daily` rows (docs/metrics.md). */
export const usageRoutes = newRouter().openapi(usage, async (c) => {
  const query = c.req.valid("query");
  const to = query.to || utcDate(new Date());
  const from = query.from || addDays(to, -(DEFAULT_DAYS - 1));
  if (from > to) throw invalidFields([{ path: "query.from", message: `must not be after to (${to})` }]);
  const days = dayNumber(to) - dayNumber(from) + 1;
  if (days > MAX_DAYS) {
    throw invalidFields([{ path: "query.from", message: `the range ${from}..${to} is ${days} days, at most ${MAX_DAYS}` }]);
  }
  const tenant = c.get("tenant");
  // The roll-up's rows (D1) and the budgets' use (the tenant's ledger), asked at once.
  const [rows, budgets] = await Promise.all([
    listUsage(c.env.DB, tenant, { from, to, agentId: query.agent_id || undefined }, MAX_ROWS + 1),
    ledgerOf(c.env, tenant).listBudgets(MAX_BUDGETS, null),
  ]);
  if (rows.length > MAX_ROWS) {
    throw invalidFields(
      [{ path: "query.from", message: `more than ${MAX_ROWS} rows: narrow the range or pass agent_id` }],
      `More than ${MAX_ROWS} usage rows match: narrow the range or pass agent_id`,
    );
  }
  return c.json({ data: rows, budgets }, 200);
});
