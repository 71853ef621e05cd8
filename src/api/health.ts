import { createRoute, z } from "@hono/zod-openapi";
import { BUILD_VERSION } from "../core/version";
import { countQuarantined } from "../db/quarantine";
import { authErrors } from "./responses";
import { bearerSecurity, newRouter } from "./router";

const health = createRoute({
  operationId: "getHealth",
  summary: "Check the Worker and its bindings",
  method: "get",
  path: "/health",
  tags: ["health"],
  security: bearerSecurity,
  responses: {
    200: {
      description: "The Worker answers and reports each binding",
      content: {
        "application/json": {
          schema: z.object({
            ok: z.boolean(),
            version: z.string(),
            bindings: z.record(z.string(), z.string()),
            quarantined: z.number().int().optional().openapi({
              description:
                "Admin only: mirror statements D1 rejected for good (listed by `GET /v1/quarantine`); absent when D1 does not answer",
            }),
          }),
        },
      },
    },
    ...authErrors,
  },
});

export const healthRoutes = newRouter().openapi(health, async (c) => {
  let db = "ok";
  let quarantined: number | undefined;
  try {
    if (c.get("isAdmin")) quarantined = await countQuarantined(c.env.DB);
    else await c.env.DB.prepare("SELECT 1").first();
  } catch {
    db = "error";
  }
  const present = (binding: unknown) => (binding ? "ok" : "missing");
  const bindings = { DB: db, SESSION: present(c.env.SESSION), MEDIA: present(c.env.MEDIA), RUNS: present(c.env.RUNS) };
  const ok = Object.values(bindings).every((state) => state === "ok");
  return c.json({ ok, version: BUILD_VERSION, bindings, ...(quarantined === undefined ? {} : { quarantined }) }, 200);
});
