import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, api, createAgent, createTenantToken, uniqueTenant, type ErrorBody } from "../support/http";
import { runTurn } from "../support/runs";
import { count } from "./support/counts";
import { appRoutes } from "./support/routes";
import { secretsIn } from "./support/secrets";

/** The owner's provider key, stored as a credential. */
const OWNER_CREDENTIAL_KEY = "owner-credential-key-4471";

/** Routes served to anyone (no token): the API reference and the OpenAPI document. */
/**
 * `GET /oauth/callback` is where a user's browser comes back from an MCP server's authorization, and
 * `GET /oauth/client-metadata.json` what an authorization server reads of Agentry's client (docs/mcp.md): no token.
 */
const PUBLIC_ROUTES = new Set([
  "GET /",
  "GET /docs",
  "GET /docs/scalar.js",
  "GET /openapi.json",
  "GET /health",
  "GET /oauth/callback",
  "GET /oauth/client-metadata.json",
]);

/** Routes only the operator's token may call (docs/api.md: key management). */
const ADMIN_ROUTES = new Set(["POST /v1/keys", "GET /v1/keys", "DELETE /v1/keys/:id", "GET /v1/quarantine"]);

/**
 * Routes that list the caller's own data: the foreign tenant gets 200 and none of the owner's ids.
 * A foreign agent's runs list answers as an unknown agent's does (200, empty), as the test of
 * tenant isolation in `npm test` reads docs/api.md.
 */
const LIST_ROUTES = new Set([
  "GET /v1/agents",
  "GET /v1/sessions",
  "GET /v1/credentials",
  "GET /v1/usage",
  "GET /v1/health",
  "GET /v1/agents/:agent_id/runs",
  "GET /v1/webhooks",
  "GET /v1/budgets",
]);

/** Routes that create the caller's own resource: the foreign tenant gets its own, never the owner's. */
const CREATE_ROUTES = new Set(["POST /v1/agents", "POST /v1/credentials", "POST /v1/webhooks"]);

type Owned = {
  agent: string;
  run: string;
  session: string;
  credential: string;
  keyId: string;
  toolCallId: string;
  webhook: string;
  budget: string;
};

/** One concrete request per route of the app, aimed at the owner's resources. */
function requestsFor(o: Owned): Record<string, { path: string; body?: unknown }> {
  return {
    "GET /v1/health": { path: "/v1/health" },
    "POST /v1/keys": { path: "/v1/keys", body: { tenant: "stolen", name: "x" } },
    "GET /v1/keys": { path: "/v1/keys" },
    "GET /v1/quarantine": { path: "/v1/quarantine" },
    "DELETE /v1/keys/:id": { path: `/v1/keys/${o.keyId}` },
    "POST /v1/agents": { path: "/v1/agents", body: { name: "own", provider: "mock", model: "m" } },
    "GET /v1/agents": { path: "/v1/agents" },
    "GET /v1/agents/:agent_id": { path: `/v1/agents/${o.agent}` },
    "PATCH /v1/agents/:agent_id": { path: `/v1/agents/${o.agent}`, body: { name: "stolen" } },
    "DELETE /v1/agents/:agent_id": { path: `/v1/agents/${o.agent}` },
    "POST /v1/credentials": { path: "/v1/credentials", body: { id: `own-${crypto.randomUUID()}`, provider: "anthropic", api_key: "k" } },
    "GET /v1/credentials": { path: "/v1/credentials" },
    "GET /v1/credentials/:id": { path: `/v1/credentials/${o.credential}` },
    "DELETE /v1/credentials/:id": { path: `/v1/credentials/${o.credential}` },
    "POST /v1/agents/:agent_id/runs": { path: `/v1/agents/${o.agent}/runs`, body: { input: "hi", session_id: o.session } },
    "GET /v1/agents/:agent_id/runs/:run_id": { path: `/v1/agents/${o.agent}/runs/${o.run}` },
    "GET /v1/agents/:agent_id/runs": { path: `/v1/agents/${o.agent}/runs` },
    "POST /v1/agents/:agent_id/runs/:run_id/cancel": { path: `/v1/agents/${o.agent}/runs/${o.run}/cancel`, body: {} },
    "POST /v1/agents/:agent_id/runs/:run_id/continue": {
      path: `/v1/agents/${o.agent}/runs/${o.run}/continue`,
      body: { tool_results: [{ tool_call_id: o.toolCallId, output: "x" }] },
    },
    "GET /v1/agents/:agent_id/runs/:run_id/checkpoints": { path: `/v1/agents/${o.agent}/runs/${o.run}/checkpoints` },
    "GET /v1/sessions": { path: "/v1/sessions" },
    "GET /v1/sessions/:session_id": { path: `/v1/sessions/${o.session}` },
    "GET /v1/sessions/:session_id/transcript": { path: `/v1/sessions/${o.session}/transcript` },
    "DELETE /v1/sessions/:session_id": { path: `/v1/sessions/${o.session}` },
    "POST /v1/sessions/:session_id/compact": { path: `/v1/sessions/${o.session}/compact`, body: {} },
    "GET /v1/agents/:agent_id/runs/:run_id/events": { path: `/v1/agents/${o.agent}/runs/${o.run}/events` },
    "GET /v1/sessions/:session_id/ws": { path: `/v1/sessions/${o.session}/ws` },
    "GET /v1/usage": { path: "/v1/usage" },
    "POST /v1/responses": { path: "/v1/responses", body: { model: o.agent, input: "hi", conversation: o.session } },
    "GET /v1/responses/:response_id": { path: `/v1/responses/${o.run}` },
    "POST /v1/responses/:response_id/cancel": { path: `/v1/responses/${o.run}/cancel` },
    "GET /v1/responses/:response_id/input_items": { path: `/v1/responses/${o.run}/input_items` },
    "DELETE /v1/responses/:response_id": { path: `/v1/responses/${o.run}` },
    "POST /v1/credentials/:id/authorize": { path: `/v1/credentials/${o.credential}/authorize`, body: {} },
    "POST /v1/webhooks": { path: "/v1/webhooks", body: { url: "https://receiver.example.com/hook", events: ["run.completed"] } },
    "GET /v1/webhooks": { path: "/v1/webhooks" },
    "GET /v1/webhooks/:id": { path: `/v1/webhooks/${o.webhook}` },
    "DELETE /v1/webhooks/:id": { path: `/v1/webhooks/${o.webhook}` },
    "GET /v1/webhooks/:id/deliveries": { path: `/v1/webhooks/${o.webhook}/deliveries` },
    "POST /v1/webhooks/:id/deliveries/:delivery_id/redeliver": { path: `/v1/webhooks/${o.webhook}/deliveries/msg_0/redeliver`, body: {} },
    "POST /v1/budgets": { path: "/v1/budgets", body: { scope: "agent", scope_id: o.agent, period: "day", max_tokens: 1 } },
    "GET /v1/budgets": { path: "/v1/budgets" },
    "GET /v1/budgets/:id": { path: `/v1/budgets/${o.budget}` },
    "PATCH /v1/budgets/:id": { path: `/v1/budgets/${o.budget}`, body: { max_tokens: 1 } },
    "DELETE /v1/budgets/:id": { path: `/v1/budgets/${o.budget}` },
  };
}

/** Sends a route's request with `token` (and, for GET, `?token=` too when `inQuery`). */
function send(method: string, request: { path: string; body?: unknown }, token: string | null, headers: Record<string, string> = {}) {
  return api(request.path, { method, body: request.body, headers }, token);
}

describe("isolation over the whole route table", () => {
  it("answers a foreign tenant 404 (403 on admin routes) on every route and lists none of the owner's data; the owner is untouched", async (context) => {
    const ownerTenant = uniqueTenant("owner");
    const owner = await createTenantToken(ownerTenant);
    const foreign = await createTenantToken();
    const key = await (await api("/v1/keys", { body: { tenant: uniqueTenant("victim"), name: "v" } })).json<{ id: string }>();
    const credential = `cred-${crypto.randomUUID()}`;
    expect(
      (await api("/v1/credentials", { body: { id: credential, provider: "anthropic", api_key: OWNER_CREDENTIAL_KEY } }, owner)).status,
    ).toBe(201);
    const agent = await createAgent({ tools: [{ type: "client", name: "ask", parameters: { type: "object", properties: {} } }] }, owner);
    const paused = await runTurn(agent.id, { input: "[[tool ask {}]]" }, owner);
    expect(paused.status).toBe("paused");
    const owned: Owned = {
      agent: agent.id,
      run: paused.id,
      session: paused.session_id,
      credential,
      keyId: key.id,
      toolCallId: paused.required_actions[0]!.tool_call_id,
      webhook: (
        await (
          await api("/v1/webhooks", { body: { url: "https://owner.example.com/hook", events: ["run.completed"] } }, owner)
        ).json<{ id: string }>()
      ).id,
      budget: (
        await (
          await api("/v1/budgets", { body: { scope: "tenant", period: "total", max_tokens: 1_000_000 } }, owner)
        ).json<{ id: string }>()
      ).id,
    };
    const requests = requestsFor(owned);
    const ownerIds = [owned.agent, owned.run, owned.session, owned.credential, owned.webhook, owned.budget, ownerTenant];

    const routes = appRoutes();
    const uncovered = routes.map((r) => `${r.method} ${r.path}`).filter((r) => !PUBLIC_ROUTES.has(r) && !(r in requests));
    expect(uncovered, "routes the isolation suite has no request for").toEqual([]);

    for (const { method, path } of routes) {
      const route = `${method} ${path}`;
      if (PUBLIC_ROUTES.has(route)) continue;
      const request = requests[route]!;
      const response = await send(method, request, foreign);
      const text = await response.text();
      count(context, "isolation", "route_tenant_checks");
      count(context, "secrets", "answers_scanned");
      count(context, "secrets", "found", secretsIn(text, [OWNER_CREDENTIAL_KEY]).length);
      expect(secretsIn(text, [OWNER_CREDENTIAL_KEY]), route).toEqual([]);
      if (ADMIN_ROUTES.has(route)) {
        expect(response.status, route).toBe(403);
      } else if (LIST_ROUTES.has(route) || CREATE_ROUTES.has(route)) {
        // Creating is the foreign tenant's own business: it must not show up in the owner's data below.
        expect(response.status, `${route}: ${text}`).toBeLessThan(300);
        if (method === "GET") for (const id of ownerIds) expect(text, route).not.toContain(id);
      } else {
        expect(response.status, `${route}: ${text}`).toBe(404);
        // The OpenAI-compatible surface answers OpenAI's error shape, with Agentry's type as its code.
        const notFound = route.includes("/v1/responses") ? { error: { code: "not_found" } } : { error: { type: "not_found" } };
        expect(JSON.parse(text) as ErrorBody).toMatchObject(notFound);
      }
    }

    // The owner still sees all of it, unchanged, and nothing the foreign tenant made.
    const run = await (await api(`/v1/agents/${owned.agent}/runs/${owned.run}`, {}, owner)).json<{ status: string }>();
    expect(run.status).toBe("paused");
    expect(await (await api(`/v1/agents/${owned.agent}`, {}, owner)).json()).toMatchObject({ name: "test agent" });
    expect((await api(`/v1/credentials/${owned.credential}`, {}, owner)).status).toBe(200);
    expect((await api(`/v1/sessions/${owned.session}/transcript`, {}, owner)).status).toBe(200);
    const agents = await (await api("/v1/agents", {}, owner)).json<{ data: { id: string }[] }>();
    expect(agents.data.map((a) => a.id)).toEqual([owned.agent]);
  });

  it("answers 401 to a missing, a malformed, a wrong and a revoked token on every authenticated route, SSE and WebSocket included", async (context) => {
    const tenant = uniqueTenant("revoked");
    const created = await (await api("/v1/keys", { body: { tenant, name: "to revoke" } })).json<{ id: string; key: string }>();
    expect((await api(`/v1/keys/${created.id}`, { method: "DELETE" })).status).toBe(204);
    const owned: Owned = {
      agent: "a",
      run: "r",
      session: "s",
      credential: "c",
      keyId: created.id,
      toolCallId: "t",
      webhook: "w",
      budget: "b",
    };
    const requests = requestsFor(owned);
    const bad: [string, string | null, Record<string, string>][] = [
      ["missing", null, {}],
      ["malformed", null, { authorization: `Basic ${btoa("user:pass")}` }],
      ["wrong", `not-a-key-${crypto.randomUUID()}`, {}],
      ["revoked", created.key, {}],
      ["admin token with a typo", `${ADMIN_TOKEN}x`, {}],
    ];
    const routes = appRoutes().filter((r) => !PUBLIC_ROUTES.has(`${r.method} ${r.path}`));
    for (const { method, path } of routes) {
      const request = requests[`${method} ${path}`];
      expect(request, `${method} ${path}`).toBeDefined();
      for (const [kind, token, headers] of bad) {
        const response = await send(method, request!, token, headers);
        expect(response.status, `${kind} ${method} ${path}`).toBe(401);
        const unauthorized = path.startsWith("/v1/responses")
          ? { error: { code: "invalid_api_key" } }
          : { error: { type: "unauthorized" } };
        expect(await response.json<ErrorBody>()).toMatchObject(unauthorized);
        count(context, "isolation", "bad_token_checks");
      }
    }
    // The browser forms: SSE and WebSocket take ?token=; a wrong or revoked one is refused before any upgrade or stream.
    for (const token of [`nope-${crypto.randomUUID()}`, created.key]) {
      const ws = await api(`/v1/sessions/s/ws?token=${encodeURIComponent(token)}`, { headers: { upgrade: "websocket" } }, null);
      expect(ws.status).toBe(401);
      expect(ws.webSocket).toBeNull();
      const sse = await api(
        `/v1/agents/a/runs/r/events?token=${encodeURIComponent(token)}`,
        { headers: { accept: "text/event-stream" } },
        null,
      );
      expect(sse.status).toBe(401);
      expect(sse.headers.get("content-type")).toMatch(/application\/json/);
      count(context, "isolation", "bad_token_checks", 2);
    }
  });
});
