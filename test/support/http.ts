import { exports } from "cloudflare:workers";
import { expect } from "vitest";
import type { Agent } from "../../src/agents";

/** The operator's token in tests (vitest.config.ts). */
export const ADMIN_TOKEN = "test-admin-token";

/** RequestInit whose `body` may be any JSON value (sent as JSON) or a raw string / BodyInit (sent as is). */
export type ApiInit = Omit<RequestInit, "body"> & { body?: unknown };

function isRawBody(body: unknown): body is BodyInit {
  return (
    typeof body === "string" ||
    body instanceof ArrayBuffer ||
    ArrayBuffer.isView(body) ||
    body instanceof ReadableStream ||
    body instanceof Blob ||
    body instanceof FormData ||
    body instanceof URLSearchParams
  );
}

/**
 * Builds the Request a client would send: `path` is below the origin (e.g. "/v1/agents"), a
 * non-string body is sent as JSON (method POST unless given), and `token` is sent as
 * `Authorization: Bearer` (pass null to send none; an explicit authorization header wins).
 */
export function apiRequest(path: string, init: ApiInit = {}, token: string | null = ADMIN_TOKEN): Request {
  const { body, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (token !== null && !headers.has("authorization")) headers.set("authorization", `Bearer ${token}`);
  let sent: BodyInit | undefined;
  if (body !== undefined) {
    sent = isRawBody(body) ? body : JSON.stringify(body);
    if (!headers.has("content-type") && typeof sent === "string") headers.set("content-type", "application/json");
  }
  const method = rest.method ?? (body === undefined ? "GET" : "POST");
  return new Request(`http://agentry.test${path}`, { ...rest, method, headers, body: sent });
}

/** Sends `apiRequest(path, init, token)` to the Worker (`exports.default.fetch`). */
export function api(path: string, init: ApiInit = {}, token: string | null = ADMIN_TOKEN): Promise<Response> {
  return exports.default.fetch(apiRequest(path, init, token));
}

/** A fresh tenant name, unique to the calling test. */
export const uniqueTenant = (prefix = "t") => `${prefix}-${crypto.randomUUID()}`;

/** Creates an API key for `tenant` with the admin token and returns its bearer token. */
export async function createTenantToken(tenant: string = uniqueTenant(), name = "test"): Promise<string> {
  const response = await api("/v1/keys", { body: { tenant, name } });
  if (response.status !== 201) throw new Error(`POST /v1/keys: ${response.status} ${await response.text()}`);
  const { key } = await response.json<{ key: string }>();
  return key;
}

/** Creates an agent (by default a mock one) and returns it; `fields` override the defaults. */
export async function createAgent(fields: Record<string, unknown> = {}, token: string = ADMIN_TOKEN): Promise<Agent> {
  const body = { name: "test agent", provider: "mock", model: "mock-1", ...fields };
  const response = await api("/v1/agents", { body }, token);
  if (response.status !== 201) throw new Error(`POST /v1/agents: ${response.status} ${await response.text()}`);
  return response.json<Agent>();
}

/** docs/api.md's error body. */
export type ErrorBody = {
  error: { type: string; message: string; details: { fields?: { path: string; message: string }[] } & Record<string, unknown> };
};

/** Asserts `400 invalid_request` naming `path` (whose message matches `message`, when given); returns the error. */
export async function expectInvalid(response: Response, path: string, message?: RegExp): Promise<ErrorBody["error"]> {
  expect(response.status).toBe(400);
  const { error } = await response.json<ErrorBody>();
  expect(error.type).toBe("invalid_request");
  const field = error.details.fields?.find((f) => f.path === path);
  expect(field, JSON.stringify(error)).toBeDefined();
  if (message) expect(field?.message).toMatch(message);
  return error;
}
