import { OpenAPIHono } from "@hono/zod-openapi";
import { HTTPException } from "hono/http-exception";
import { bodyLimit } from "hono/body-limit";
import { log } from "../core/log";
import { ApiError } from "./errors";
import { authenticate } from "./auth";
import { corsForListedOrigins } from "./cors";
import { rateLimit } from "./rate-limit";
import { jsonDepthGuard } from "./json-depth-guard";
import type { AppEnv } from "./router";
import { healthRoutes } from "./health";
import { agentRoutes } from "./agents";
import { keyRoutes } from "./keys";
import { credentialRoutes } from "./credentials";
import { runRoutes } from "./runs";
import { sessionRoutes } from "./sessions";
import { eventRoutes } from "./events";
import { sessionSocketRoutes } from "./session-socket";
import { usageRoutes } from "./usage";
import { docsRoutes } from "./docs";
import { requestContext } from "./request-context";
import { livenessRoutes } from "./liveness";

const MAX_BODY_BYTES = 25 * 1024 * 1024;

/** The Worker's HTTP API (API.md): one app, one error handler, every route in the OpenAPI document. */
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
  app.route("/v1", agentRoutes);
  app.route("/v1", credentialRoutes);
  app.route("/v1", runRoutes);
  app.route("/v1", sessionRoutes);
  app.route("/v1", eventRoutes);
  app.route("/v1", sessionSocketRoutes);
  app.route("/v1", usageRoutes);
  app.route("/", docsRoutes);
  app.route("/", livenessRoutes);

  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", { type: "http", scheme: "bearer" });
  app.doc31("/openapi.json", {
    openapi: "3.1.0",
    // Relative: the Worker that serves this document (`npm start`, a deployment) is the server.
    servers: [{ url: "/", description: "This Worker" }],
    info: { title: "Agentry API", version: "1", description: "Durable AI agent sessions on Cloudflare Workers." },
  });

  app.notFound((c) => new ApiError("not_found", `No route for ${c.req.method} ${c.req.path}`).toResponse());
  app.onError((error) => errorResponse(error));
  return app;
}

/** Every error, from every route, as API.md's JSON body; never a stack trace. */
export function errorResponse(error: unknown): Response {
  if (error instanceof ApiError) return error.toResponse();
  if (error instanceof HTTPException) {
    if (error.status === 415) {
      return new ApiError("invalid_request", "Content-Type must be application/json", {
        fields: [{ path: "content-type", message: "must be application/json" }],
      }).toResponse();
    }
    if (error.status === 400) {
      return new ApiError("invalid_request", error.message || "Bad request", {
        fields: [{ path: "body", message: error.message || "bad request" }],
      }).toResponse();
    }
    if (error.status === 413) return new ApiError("payload_too_large", "Request body is too large").toResponse();
  }
  log({ event: "unhandled_error", message: error instanceof Error ? error.message : String(error), error_type: error instanceof Error ? error.name : typeof error });
  return new ApiError("internal", "Internal error").toResponse();
}
