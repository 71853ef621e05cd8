import { createMiddleware } from "hono/factory";
import { sha256Hex } from "../core/hash";
import { addLogContext } from "../core/log";
import { lookupCacheMs } from "../core/settings";
import { findKeyByHashCached } from "../db/keys";
import { ApiError } from "./errors";
import type { AppEnv } from "./router";

/** SHA-256 hex of a token; keys are stored only as this hash. */
export const hashToken = (token: string): Promise<string> => sha256Hex(token);

/**
 * Compares two secrets in constant time: both are hashed first, so the lengths match, then
 * compared with workerd's `crypto.subtle.timingSafeEqual`.
 */
async function sameSecret(a: string, b: string): Promise<boolean> {
  const encoder = new TextEncoder();
  const [ha, hb] = await Promise.all([hashToken(a), hashToken(b)]);
  return crypto.subtle.timingSafeEqual(encoder.encode(ha), encoder.encode(hb));
}

function tokenOf(request: Request): string | null {
  const header = request.headers.get("authorization");
  if (header) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    return match?.[1] ?? null;
  }
  // Browsers' EventSource and WebSocket cannot set headers (API.md): SSE and WebSocket routes take ?token=.
  const url = new URL(request.url);
  if (request.method === "GET" && TOKEN_IN_QUERY_ROUTES.some((route) => route.test(url.pathname))) return url.searchParams.get("token");
  return null;
}

/** The two routes that take `?token=`: a run's events (SSE) and a session's WebSocket, matched exactly. */
const TOKEN_IN_QUERY_ROUTES = [/^\/v1\/agents\/[^/]+\/runs\/[^/]+\/events$/, /^\/v1\/sessions\/[^/]+\/ws$/];

/** Authenticates every /v1 route: the operator's ADMIN_TOKEN (tenant `default`) or a tenant key. */
export const authenticate = createMiddleware<AppEnv>(async (c, next) => {
  const token = tokenOf(c.req.raw);
  if (!token) throw new ApiError("unauthorized", "Missing bearer token");
  const admin = c.env.ADMIN_TOKEN;
  if (admin && (await sameSecret(token, admin))) {
    c.set("tenant", "default");
    c.set("isAdmin", true);
    c.set("tokenId", "admin");
  } else {
    const key = await findKeyByHashCached(c.env.DB, await hashToken(token), lookupCacheMs(c.env));
    if (!key) throw new ApiError("unauthorized", "Invalid bearer token");
    c.set("tenant", key.tenant);
    c.set("isAdmin", false);
    c.set("tokenId", key.id);
  }
  addLogContext({ tenant: c.get("tenant") });
  await next();
});

/** Admin-only routes (key management). */
export const requireAdmin = createMiddleware<AppEnv>(async (c, next) => {
  if (!c.get("isAdmin")) throw new ApiError("forbidden", "Only the admin token may manage keys");
  await next();
});
