import { OpenAPIHono } from "@hono/zod-openapi";
import { serveOpenApiDocument } from "./openapi-document";
import { bodyLimit } from "hono/body-limit";
import { ApiError, asApiError } from "./errors";
import { authenticate } from "./auth";
import { corsForListedOrigins } from "./cors";
import { rateLimit } from "./rate-limit";
import { jsonDepthGuard } from "./json-depth-guard";
import type { AppEnv } from "./router";
import { healthRoutes } from "./health";
import { agentRoutes } from "./agents";
import { keyRoutes } from "./keys";
import { quarantineRoutes } from "./quarantine";
import { credentialRoutes } from "./credentials";
import { runRoutes } from "./runs";
import { sessionRoutes } from "./sessions";
import { eventRoutes } from "./events";
import { sessionSocketRoutes } from "./session-socket";
import { usageRoutes } from "./usage";
import { webhookRoutes } from "./webhooks";
import { budgetRoutes } from "./budgets";
import { docsRoutes } from "./docs";
import { requestContext } from "./request-context";
import { livenessRoutes } from "./liveness";
import { oauthCallbackRoutes } from "./oauth-callback";
import { isOpenAiPath, openAiErrorResponse, openAiResponseRoutes } from "./openai-responses";

const MAX_BODY_BYTES = 25 * 1024 * 1024;

/** The Worker's HTTP API (docs/api.md): one app, one error handler, every route in the OpenAPI document. */
export function createApp() {
  const app = new OpenAPIHono<AppEnv>();

  app.use("*", requestContext);
  app.use("/v1/*", corsForListedOrigins);
  app.use(
    "/v1/*",
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: () => new ApiError("payload_too_large", "Request body is over 25 MB").toResponse(),
    }),
  );
  app.use("/v1/*", authenticate);
  app.use("/v1/*", rateLimit);
  app.use("/v1/*", jsonDepthGuard);

  app.route("/v1", healthRoutes);
  app.route("/v1", keyRoutes);
  app.route("/v1", quarantineRoutes);
  app.route("/v1", agentRoutes);
  app.route("/v1", credentialRoutes);
  app.route("/v1", runRoutes);
  app.route("/v1", sessionRoutes);
  app.route("/v1", eventRoutes);
  app.route("/v1", sessionSocketRoutes);
  app.route("/v1", usageRoutes);
  app.route("/v1", webhookRoutes);
  app.route("/v1", budgetRoutes);
  app.route("/v1", openAiResponseRoutes);
  app.route("/", docsRoutes);
  app.route("/", livenessRoutes);
  app.route("/", oauthCallbackRoutes);

  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", { type: "http", scheme: "bearer" });
  serveOpenApiDocument(app, {
    openapi: "3.1.0",
    // Relative: the Worker that serves this document (`npm start`, a deployment) is the server.
    servers: [{ url: "/", description: "This Worker" }],
    info: { title: "Agentry API", version: "1", description: "Durable AI agent sessions on Cloudflare Workers." },
  });

  app.notFound((c) => new ApiError("not_found", `No route for ${c.req.method} ${c.req.path}`).toResponse());
  app.onError((error, c) => (isOpenAiPath(c.req.path) ? openAiErrorResponse(error) : errorResponse(error)));
  return app;
}

/** Every error, from every route, as docs/api.md's JSON body; never a stack trace. */
export function errorResponse(error: unknown): Response {
  return asApiError(error).toResponse();
}

/** The type of the Worker's Hono app (for `hc<AppType>` and typed helpers); the typed client in `client/` is typed from the OpenAPI document. */
export type AppType = ReturnType<typeof createApp>;
