import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ADMIN_TOKEN, api, createAgent, createTenantToken, uniqueTenant } from "./support/http";
import { readEvents, type Run } from "./support/runs";
import { OPERATOR_GATEWAY_TOKEN, OPERATOR_KEYS, PROVIDERS, requestsOf, upstreamBase } from "./support/upstreams";

/**
 * The secrets scan (issue 9): runs on every provider that succeed and fail through a gateway of
 * the operator's and through a tenant's own upstream, both of which echo every request header
 * back in their error bodies; then every answer, stored event, transcript, D1 row, Durable
 * Object row and log line is searched for every secret, and the upstreams' records are checked
 * for whose key reached where.
 */
const TENANT_KEY = "tenant-credential-key-5e1f7a";
const TENANT_HEADER = "tenant-gateway-secret-91c2";
const OPERATOR_HEADER = OPERATOR_GATEWAY_TOKEN;
const SECRETS = [
  ...OPERATOR_KEYS,
  OPERATOR_HEADER,
  TENANT_KEY,
  TENANT_HEADER,
  String(env.WEBHOOK_SECRET),
  String(env.CREDENTIALS_KEY),
  ADMIN_TOKEN,
];

/** Every row of every table of a Durable Object's SQLite storage, as JSON. */
function dumpSql(sql: SqlStorage): string {
  const tables = sql
    .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_cf%' ESCAPE '\\'")
    .toArray();
  return JSON.stringify(tables.map(({ name }) => sql.exec(`SELECT * FROM "${name}"`).toArray()));
}

const answers: string[] = [];
const logs: string[] = [];
const sessions: { token: string; session_id: string }[] = [];
const buckets = { gateway: [] as string[], foreign: [] as string[] };

/** Sends a request and keeps its whole answer for the scan. */
async function call(path: string, init: Parameters<typeof api>[1], token: string): Promise<Response> {
  const response = await api(path, init, token);
  const text = await response.text();
  answers.push(text);
  return new Response(text, { status: response.status, headers: response.headers });
}

async function turn(agentId: string, input: string, token: string): Promise<Run> {
  const response = await call(`/v1/agents/${agentId}/runs`, { body: { input, stream: true } }, token);
  expect(response.status).toBe(200);
  const events = await readEvents(response);
  const run = await (await call(`/v1/agents/${agentId}/runs/${events[0]!.run_id}`, {}, token)).json<Run>();
  sessions.push({ token, session_id: run.session_id });
  return run;
}

describe("the secrets scan", () => {
  let token = "";
  const tenant = uniqueTenant("scan");
  const spies = (["log", "info", "warn", "error", "debug"] as const).map((level) =>
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void logs.push(args.map(String).join(" "))),
  );

  beforeAll(async () => {
    token = await createTenantToken(tenant);
  });
  afterAll(() => {
    for (const spy of spies) spy.mockRestore();
  });

  it.each(PROVIDERS)("%s: the operator's gateway, succeeding and echoing headers in an error", async (provider) => {
    const ok = crypto.randomUUID();
    const echo = crypto.randomUUID();
    buckets.gateway.push(ok, echo);
    const good = await createAgent({ provider, model: "m", base_url: upstreamBase(env.GATEWAY_URL, ok, provider) }, token);
    const bad = await createAgent({ provider, model: "m", base_url: upstreamBase(env.GATEWAY_URL, echo, provider, "echo") }, token);
    expect((await turn(good.id, "hello", token)).status).toBe("completed");
    const failed = await turn(bad.id, "hello", token);
    expect(failed.error).toMatchObject({ type: "provider_error", status: 400 });
    expect(failed.error?.message).toContain("[redacted]");
    const seen = JSON.stringify(await requestsOf(env.GATEWAY_URL, echo));
    expect(seen).toContain(OPERATOR_HEADER);
  });

  it.each(PROVIDERS)("%s: a tenant's credential on its own upstream, succeeding and echoing headers in an error", async (provider) => {
    const ok = crypto.randomUUID();
    const echo = crypto.randomUUID();
    buckets.foreign.push(ok, echo);
    const id = `cred-${provider}`;
    const created = await call(
      "/v1/credentials",
      { body: { id, provider, api_key: TENANT_KEY, headers: { "x-tenant-gateway": TENANT_HEADER } } },
      token,
    );
    expect(created.status).toBe(201);
    const good = await createAgent(
      { provider, model: "m", credential: id, base_url: upstreamBase(env.FOREIGN_UPSTREAM_URL, ok, provider) },
      token,
    );
    const bad = await createAgent(
      { provider, model: "m", credential: id, base_url: upstreamBase(env.FOREIGN_UPSTREAM_URL, echo, provider, "echo") },
      token,
    );
    expect((await turn(good.id, "hello", token)).status).toBe("completed");
    const failed = await turn(bad.id, "hello", token);
    expect(failed.error).toMatchObject({ type: "provider_error", status: 400 });
    const [request] = await requestsOf(env.FOREIGN_UPSTREAM_URL, ok);
    expect(request?.headers["x-tenant-gateway"]).toBe(TENANT_HEADER);
    expect(request?.headers["x-api-key"] ?? request?.headers.authorization).toContain(TENANT_KEY);
  });

  it("a webhook tool whose receiver echoes every header", async () => {
    const hook = crypto.randomUUID();
    buckets.foreign.push(hook);
    const agent = await createAgent(
      { tools: [{ type: "webhook", name: "echo", parameters: { type: "object" }, url: `${env.FOREIGN_UPSTREAM_URL}/hook/${hook}` }] },
      token,
    );
    const run = await turn(agent.id, "[[tool echo {}]] go", token);
    expect(run.status).toBe("completed");
    expect(String(run.output)).toContain("x-agentry-signature=sha256=");
  });

  it("a lifecycle webhook: made, listed, read, and delivered to a receiver that records every header", async () => {
    const hook = crypto.randomUUID();
    buckets.foreign.push(hook);
    // Made with `api`, not `call`: its answer is the one place the secret may be.
    const created = await api(
      "/v1/webhooks",
      { body: { url: `${env.FOREIGN_UPSTREAM_URL}/hook/${hook}`, events: ["run.completed"] } },
      token,
    );
    const { id, secret } = await created.json<{ id: string; secret: string }>();
    expect(secret).toMatch(/^whsec_/);
    SECRETS.push(secret, secret.slice("whsec_".length));
    const agent = await createAgent({}, token);
    await turn(agent.id, "hello", token);
    for (;;) {
      const page = await (await call(`/v1/webhooks/${id}/deliveries`, {}, token)).json<{ data: { attempts: number }[] }>();
      if ((page.data[0]?.attempts ?? 0) >= 1) break;
      await scheduler.wait(20);
    }
    expect((await call("/v1/webhooks", {}, token)).status).toBe(200);
    expect((await call(`/v1/webhooks/${id}`, {}, token)).status).toBe(200);
    expect(JSON.stringify(await requestsOf(env.FOREIGN_UPSTREAM_URL, hook))).toContain("webhook-signature");
  });

  it("the attack: a tenant's base_url without a credential is refused on every provider", async () => {
    for (const provider of PROVIDERS) {
      const response = await call(
        "/v1/agents",
        { body: { provider, model: "m", base_url: upstreamBase(env.FOREIGN_UPSTREAM_URL, "x", provider) } },
        token,
      );
      expect(response.status).toBe(400);
    }
  });

  it("finds no secret anywhere, and the operator's keys only at its endpoints", async () => {
    for (const { session_id } of sessions) {
      const events = await call(`/v1/sessions/${session_id}/transcript?full=true`, {}, token);
      expect(events.status).toBe(200);
    }
    const listed = await call("/v1/credentials", {}, token);
    expect(listed.status).toBe(200);
    const tables = await env.DB.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_cf%' ESCAPE '\\'").all<{
      name: string;
    }>();
    expect(tables.results.map((t) => t.name)).toEqual(expect.arrayContaining(["agents", "runs", "messages", "events", "credentials"]));
    const rows: string[] = [];
    for (const { name } of tables.results) {
      rows.push(JSON.stringify((await env.DB.prepare(`SELECT * FROM "${name}"`).all()).results));
    }
    const objectRows: string[] = [];
    for (const { session_id } of sessions) {
      const stub = env.SESSION.get(env.SESSION.idFromName(`${tenant}/${session_id}`));
      objectRows.push(await runInDurableObject(stub, (_instance, state) => dumpSql(state.storage.sql)));
    }
    expect(objectRows).toHaveLength(sessions.length);
    const upstream = {
      gateway: await Promise.all(buckets.gateway.map((b) => requestsOf(env.GATEWAY_URL, b))),
      foreign: await Promise.all(buckets.foreign.map((b) => requestsOf(env.FOREIGN_UPSTREAM_URL, b))),
    };
    const places = { answers: answers.join("\n"), d1: rows.join("\n"), objects: objectRows.join("\n"), logs: logs.join("\n") };
    // The scan looks where the secrets would be: the echoed errors, the runs and their log lines.
    expect(places.answers).toContain("[redacted]");
    expect(places.d1).toContain("[redacted]");
    expect(places.objects).toContain("[redacted]");
    expect(places.logs).toContain("run_finished");
    for (const secret of SECRETS) {
      for (const [place, text] of Object.entries(places)) expect({ place, found: text.includes(secret) }).toEqual({ place, found: false });
    }
    const foreign = JSON.stringify(upstream.foreign);
    for (const secret of [...OPERATOR_KEYS, OPERATOR_HEADER]) expect(foreign).not.toContain(secret);
    expect(JSON.stringify(upstream.gateway)).not.toContain(TENANT_KEY);
    expect(upstream.foreign.flat().length).toBeGreaterThan(0);
  });
});
