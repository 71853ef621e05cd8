import { cors } from "hono/cors";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "./router";

/** The headers a browser front-end sends (docs/api.md: bearer auth, JSON, idempotency, SSE resume). */
const ALLOWED_HEADERS = ["Authorization", "Content-Type", "Idempotency-Key", "Last-Event-ID"];
const ALLOWED_METHODS = ["GET", "POST", "PATCH", "DELETE", "OPTIONS"];
/** Seconds a browser may keep a preflight's answer. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/** The exact origins of `CORS_ORIGINS` (comma-separated, e.g. `https://app.example.com`); none when unset. */
export function corsOrigins(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((origin) => origin.trim())
    .filter((origin) => origin !== "");
}

// Bearer tokens, never cookies: no Access-Control-Allow-Credentials. `origin` echoes the request's
// Origin because `corsForListedOrigins` only calls this for listed origins.
const listedOriginCors = cors({
  origin: (origin) => origin,
  allowHeaders: ALLOWED_HEADERS,
  allowMethods: ALLOWED_METHODS,
  exposeHeaders: ["Retry-After"],
  maxAge: PREFLIGHT_MAX_AGE_SECONDS,
});

/**
 * CORS for browser front-ends on the origins of `CORS_ORIGINS`, off when it is unset. Runs
 * first on /v1/*: a preflight `OPTIONS` from a listed origin is answered `204` before
 * authentication and rate limiting. A request from any other origin gets no CORS headers,
 * only `Vary: Origin` while the list is set, since the answer depends on the origin.
 */
export const corsForListedOrigins = createMiddleware<AppEnv>(async (c, next) => {
  const origins = corsOrigins(c.env.CORS_ORIGINS);
  if (origins.length === 0) return next();
  const origin = c.req.header("origin");
  if (origin && origins.includes(origin)) return listedOriginCors(c, next);
  await next();
  c.header("Vary", "Origin", { append: true });
});
