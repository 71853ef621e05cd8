import { createRoute, z } from "@hono/zod-openapi";
import { ApiError } from "./errors";
import { authErrors, notBuiltResponse } from "./responses";
import { bearerSecurity, newRouter } from "./router";

const usage = createRoute({
  method: "get",
  path: "/usage",
  tags: ["usage"],
  summary: "Daily usage of the tenant (not built yet)",
  security: bearerSecurity,
  request: {
    query: z.object({ from: z.string().optional(), to: z.string().optional(), agent_id: z.string().optional() }),
  },
  responses: { 501: notBuiltResponse, ...authErrors },
});

export const usageRoutes = newRouter().openapi(usage, () => {
  throw new ApiError("not_implemented", "GET /v1/usage is not supported yet");
});
