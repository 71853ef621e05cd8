import { createMiddleware } from "hono/factory";
import { sha256Hex } from "../core/hash";
import { addLogContext } from "../core/log";
import { lookupCacheMs } from "../core/settings";
import { findKeyByHashCached } from "../db/keys";
import { ApiError } from "./errors";
import type { AppEnv } from "./router";

/** SHA-256 hex of a token; keys are stored only as this hash. */
export const hashToken = (token: string): Promise<string> => sha256Hex(token);

/** The admin token's hash, computed once per isolate per value. */
let adminHash: { token: string; hash: string } | null = null;
async function adminHashOf(admin: string): Promise<string> {
  if (adminHash?.token === admin) return adminHash.hash;
  const hash = await hashToken(admin);
  adminHash = { token: admin, hash };
  return hash;
}

/** Compares two SHA-256 hex hashes (equal lengths) in constant time, with workerd's `crypto.subtle.timingSafeEqual`. */
function sameHash(a: string, b: string): boolean {
  const encoder = new TextEncoder();
  return crypto.subtle.timingSafeEqual(encoder.encode(a), encoder.encode(b));
}

function tokenOf(request: Request): string | null {
  const header = request.headers.get("authorization");
  if (header) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    return match?.[1] ?? null;
  }
  // Browsers' EventSource and WebSocket cannot set headers (docs/api.md): SSE and WebSocket routes take ?token=.
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
  // One digest of the token serves both the admin comparison and the key lookup.
  const tokenHash = await hashToken(token);
  if (admin && sameHash(tokenHash, await adminHashOf(admin))) {
    c.set("tenant", "default");
    c.set("isAdmin", true);
    c.set("tokenId", "admin");
  } else {
    const key = await findKeyByHashCached(c.env.DB, tokenHash, lookupCacheMs(c.env));
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
