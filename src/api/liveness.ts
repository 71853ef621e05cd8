import { createRoute, z } from "@hono/zod-openapi";
import { BUILD_VERSION } from "../core/version";
import { newRouter } from "./router";

const liveness = createRoute({
  operationId: "getLiveness",
  method: "get",
  path: "/health",
  tags: ["health"],
  summary: "Liveness: the Worker answers (no auth, no binding touched)",
  security: [],
  responses: {
    200: {
      description: "The Worker is up",
      content: { "application/json": { schema: z.object({ ok: z.literal(true), version: z.string() }) } },
    },
  },
});

/** `GET /health` for load balancers and uptime checks: unauthenticated, touches nothing. */
export const livenessRoutes = newRouter().openapi(liveness, (c) => c.json({ ok: true as const, version: BUILD_VERSION }, 200));
