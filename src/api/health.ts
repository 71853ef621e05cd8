import { createRoute, z } from "@hono/zod-openapi";
import { bearerSecurity, newRouter } from "./router";

const health = createRoute({
  method: "get",
  path: "/health",
  tags: ["health"],
  security: bearerSecurity,
  responses: {
    200: {
      description: "The Worker answers and reports each binding",
      content: {
        "application/json": {
          schema: z.object({ ok: z.boolean(), bindings: z.record(z.string(), z.string()) }),
        },
      },
    },
  },
});

export const healthRoutes = newRouter().openapi(health, async (c) => {
  let db = "ok";
  try {
    await c.env.DB.prepare("SELECT 1").first();
  } catch {
    db = "error";
  }
  const bindings = { DB: db, SESSION: c.env.SESSION ? "ok" : "missing", MEDIA: c.env.MEDIA ? "ok" : "missing" };
  return c.json({ ok: db === "ok", bindings }, 200);
});
