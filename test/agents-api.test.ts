import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Agent } from "../src/agents";
import { createApp } from "../src/api/app";
import { findAgent } from "../src/db/agents";
import { ADMIN_TOKEN, api, apiRequest, createAgent, createTenantToken, expectInvalid, uniqueTenant } from "./support/http";
import type { ApiInit } from "./support/http";

type Page<T> = { data: T[]; next_cursor: string | null };
type ErrorBody = { error: { type: string; message: string; details: { fields?: { path: string; message: string }[] } } };

/** docs/api.md's list order: newest first; rows of the same millisecond by id, descending. */
const newestFirst = <T extends { id: string; created_at: string }>(rows: T[]) =>
  [...rows].sort((a, b) => (`${b.created_at} ${b.id}` < `${a.created_at} ${a.id}` ? -1 : 1));

const uniqueId = (prefix = "agent") => `${prefix}-${crypto.randomUUID()}`;

async function listAll(token: string): Promise<Agent[]> {
  const response = await api("/v1/agents?limit=100", {}, token);
  expect(response.status).toBe(200);
  return (await response.json<Page<Agent>>()).data;
}

async function getAgent(id: string, token = ADMIN_TOKEN): Promise<Agent> {
  const response = await api(`/v1/agents/${id}`, {}, token);
  expect(response.status).toBe(200);
  return response.json<Agent>();
}

const patch = (id: string, body: unknown, token = ADMIN_TOKEN) => api(`/v1/agents/${id}`, { method: "PATCH", body }, token);

describe("POST /v1/agents", () => {
  it("creates an agent with every default filled, version 1", async () => {
    const token = await createTenantToken();
    const response = await api("/v1/agents", { body: { provider: "mock", model: "mock-1" } }, token);
    expect(response.status).toBe(201);
    const agent = await response.json<Agent>();
    expect(agent).toEqual({
      id: expect.stringMatching(/^agt_/),
      name: null,
      provider: "mock",
      model: "mock-1",
      base_url: null,
      credential: null,
      instructions: "",
      tools: [],
      output_schema: null,
      retries: 0,
      delay_between_retries: 1,
      exponential_backoff: false,
      max_steps: 25,
      max_output_tokens: 4096,
      temperature: null,
      top_p: null,
      tool_choice: "auto",
      parallel_tool_calls: true,
      reasoning: null,
      max_tool_calls: null,
      thinking: null,
      stop: null,
      max_cost_usd: null,
      prices: null,
      compaction: null,
      approval_timeout_seconds: null,
      on_busy: "reject",
      store_events: true,
      metadata: {},
      version: 1,
      created_at: expect.stringMatching(/Z$/),
      updated_at: agent.created_at,
    });
    expect(await getAgent(agent.id, token)).toEqual(agent);
  });

  it("stores every tool type with its defaults, and the fields built so far", async () => {
    const body = {
      id: uniqueId(),
      name: "Support bot",
      provider: "openai",
      model: "gpt-5",
      base_url: "mock:",
      instructions: "You are helpful.",
      tools: [
        { type: "webhook", name: "get_weather", description: "Weather", url: "https://tools.example.com/weather" },
        {
          type: "client",
          name: "ask_user",
          parameters: { type: "object", properties: { question: { type: "string" } }, required: ["question"] },
        },
        { type: "builtin", name: "current_time" },
        { type: "builtin", name: "http_get" },
      ],
      delay_between_retries: 0.5,
      exponential_backoff: true,
      max_steps: 100,
      max_output_tokens: 1000,
      compaction: { enabled: false },
      store_events: false,
      metadata: { team: "support", http_get_allow: ["example.com"] },
    };
    const agent = await createAgent(body);
    expect(agent).toMatchObject({ ...body, version: 1 });
    expect(agent.tools[0]).toEqual({
      type: "webhook",
      name: "get_weather",
      description: "Weather",
      url: "https://tools.example.com/weather",
      parameters: { type: "object", properties: {} },
      timeout_ms: 10000,
      requires_approval: false,
    });
    expect(agent.compaction).toEqual({ enabled: false, trigger_tokens: 120000, keep_last_messages: 8 });
    expect(await getAgent(body.id)).toEqual(agent);
  });

  it("accepts a client-chosen id once per tenant; other tenants may use it too", async () => {
    const id = uniqueId("support");
    const first = await createAgent({ id });
    expect(first.id).toBe(id);
    const again = await api("/v1/agents", { body: { id, provider: "mock", model: "other" } });
    expect(again.status).toBe(409);
    expect((await again.json<ErrorBody>()).error.type).toBe("already_exists");
    expect(await getAgent(id)).toEqual(first);
    const other = await createAgent({ id }, await createTenantToken());
    expect(other.id).toBe(id);
  });

  it("answers 400 naming the field for every schema violation, and stores nothing", async () => {
    const token = await createTenantToken();
    const base = { provider: "mock", model: "mock-1" };
    const webhook = { type: "webhook", name: "hook", url: "https://example.com/hook" };
    const cases: [Record<string, unknown>, string][] = [
      [{ ...base, temperature: 3 }, "temperature"],
      [{ ...base, id: "has/slash" }, "id"],
      [{ ...base, id: ".dot-first" }, "id"],
      [{ ...base, provider: "gemini" }, "provider"],
      [{ provider: "mock" }, "model"],
      [{ ...base, model: "" }, "model"],
      [{ model: "m" }, "provider"],
      [{ ...base, name: 5 }, "name"],
      [{ ...base, base_url: "ftp://example.com" }, "base_url"],
      [{ ...base, base_url: "not a url" }, "base_url"],
      [{ ...base, instructions: null }, "instructions"],
      [{ ...base, tools: "none" }, "tools"],
      [{ ...base, tools: [null] }, "tools.0"],
      [{ ...base, tools: [{ type: "webhook", url: "https://example.com" }] }, "tools.0.name"],
      [{ ...base, tools: [{ type: "client" }] }, "tools.0.name"],
      [{ ...base, tools: [{ ...webhook, name: "has space" }] }, "tools.0.name"],
      [{ ...base, tools: [{ ...webhook, name: "x".repeat(65) }] }, "tools.0.name"],
      [{ ...base, tools: [webhook, { type: "client", name: "hook" }] }, "tools.1.name"],
      // A custom tool may not take a builtin's name: Anthropic refuses two tools of one name.
      [
        {
          ...base,
          tools: [
            { type: "builtin", name: "current_time" },
            { type: "client", name: "current_time" },
          ],
        },
        "tools.1.name",
      ],
      [{ ...base, tools: [{ type: "builtin", name: "rm_rf" }] }, "tools.0.name"],
      [{ ...base, tools: [{ type: "plugin", name: "x" }] }, "tools.0.type"],
      [{ ...base, tools: [{ ...webhook, secret: "s" }] }, "tools.0.secret"],
      [{ ...base, tools: [{ ...webhook, url: "ftp://example.com" }] }, "tools.0.url"],
      [{ ...base, tools: [webhook, { ...webhook, name: "b", url: "nope" }] }, "tools.1.url"],
      [{ ...base, tools: [{ ...webhook, timeout_ms: 99 }] }, "tools.0.timeout_ms"],
      [{ ...base, tools: [{ ...webhook, timeout_ms: 60001 }] }, "tools.0.timeout_ms"],
      [{ ...base, tools: [{ ...webhook, parameters: { type: "array" } }] }, "tools.0.parameters.type"],
      // Not valid JSON Schema: Anthropic would refuse every run of the agent.
      [
        { ...base, tools: [{ type: "client", name: "c", parameters: { type: "object", properties: { a: { type: "strng" } } } }] },
        "tools.0.parameters",
      ],
      [
        { ...base, tools: [{ ...webhook, parameters: { type: "object", properties: { a: { type: "number", minimum: "1" } } } }] },
        "tools.0.parameters",
      ],
      [{ ...base, output_schema: { type: "object", properties: { a: { anyOf: [] } } } }, "output_schema"],
      [{ ...base, provider: "openai-chat", tools: [{ type: "client", name: "c", description: "d".repeat(1025) }] }, "tools.0.description"],
      [{ ...base, tools: [{ ...webhook, parameters: {} }] }, "tools.0.parameters.type"],
      [{ ...base, tools: [{ ...webhook, parameters: { type: "object", required: "a" } }] }, "tools.0.parameters.required"],
      [{ ...base, tools: [{ type: "builtin", name: "http_get", url: "https://x.com" }] }, "tools.0.url"],
      [{ ...base, output_schema: { type: "string" } }, "output_schema.type"],
      [{ ...base, output_schema: [] }, "output_schema"],
      [{ ...base, retries: -1 }, "retries"],
      [{ ...base, retries: 1.5 }, "retries"],
      [{ ...base, delay_between_retries: -1 }, "delay_between_retries"],
      [{ ...base, exponential_backoff: "yes" }, "exponential_backoff"],
      [{ ...base, max_steps: 0 }, "max_steps"],
      [{ ...base, max_steps: 101 }, "max_steps"],
      [{ ...base, max_output_tokens: 0 }, "max_output_tokens"],
      [{ ...base, max_cost_usd: -1 }, "max_cost_usd"],
      [{ ...base, compaction: { enabled: true, every: 3 } }, "compaction.every"],
      [{ ...base, compaction: { trigger_tokens: "many" } }, "compaction.trigger_tokens"],
      [{ ...base, store_events: "yes" }, "store_events"],
      [{ ...base, metadata: "x" }, "metadata"],
      [{ ...base, metadata: { http_get_allow: [1] } }, "metadata.http_get_allow.0"],
      [{ ...base, version: 3 }, "version"],
      [{ ...base, instructions: "x".repeat(1_100_000) }, "body"],
    ];
    for (const [body, path] of cases) {
      await expectInvalid(await api("/v1/agents", { body }, token), path);
    }
    expect(await listAll(token)).toEqual([]);
  });

  it("answers 400, never 5xx, for bodies that are not agent objects", async () => {
    const token = await createTenantToken();
    const bodies: ApiInit[] = [
      { body: "{not json" },
      { body: "" },
      { body: "null" },
      { body: "[]" },
      { body: "42" },
      { body: '"agent"' },
      { body: '{"provider":"mock","model":"m"}', headers: { "content-type": "text/plain" } },
      { body: { provider: null, model: null, tools: { 0: {} } } },
      { body: { provider: "mock", model: "m", tools: [[]] } },
      { body: { provider: "mock", model: "m", metadata: null } },
    ];
    for (const init of bodies) {
      const response = await api("/v1/agents", { method: "POST", ...init }, token);
      expect(response.status, JSON.stringify(init)).toBe(400);
      expect((await response.json<ErrorBody>()).error.type).toBe("invalid_request");
    }
    expect(await listAll(token)).toEqual([]);
  });

  it("refuses an output schema over Anthropic's structured-output limits (24 optional, 16 union-typed properties), on create and PATCH, and stores nothing", async () => {
    const token = await createTenantToken();
    const schema = (count: number, property: Record<string, unknown>, required: boolean) => {
      const names = Array.from({ length: count }, (_, i) => `p${i}`);
      return {
        type: "object",
        properties: Object.fromEntries(names.map((name) => [name, property])),
        ...(required ? { required: names } : {}),
      };
    };
    const optional = schema(25, { type: "string" }, false);
    const unions = schema(17, { type: ["string", "null"] }, true);
    for (const provider of ["mock", "anthropic"]) {
      const model = provider === "mock" ? "mock-1" : "claude-sonnet-4-5";
      await expectInvalid(
        await api("/v1/agents", { body: { provider, model, output_schema: optional } }, token),
        "output_schema",
        /^has 25 optional properties \(not in required\); Anthropic's structured outputs take at most 24$/,
      );
      await expectInvalid(
        await api("/v1/agents", { body: { provider, model, output_schema: unions } }, token),
        "output_schema",
        /^has 17 properties with union types \(a type array, anyOf or oneOf\); Anthropic's structured outputs take at most 16$/,
      );
    }
    expect(await listAll(token)).toEqual([]);
    // OpenAI's structured outputs have no such limits; the limits themselves are taken.
    await createAgent({ provider: "openai", model: "gpt-4o", output_schema: optional }, token);
    const agent = await createAgent({ output_schema: schema(24, { type: "string" }, false) }, token);
    await createAgent({ output_schema: schema(16, { anyOf: [{ type: "string" }, { type: "null" }] }, true) }, token);
    await expectInvalid(
      await api(`/v1/agents/${agent.id}`, { method: "PATCH", body: { output_schema: optional } }, token),
      "output_schema",
      /at most 24/,
    );
    expect(await getAgent(agent.id, token)).toEqual(agent);
  });

  it("checks what the schema cannot after the shape: a budget needs a price", async () => {
    const token = await createTenantToken();
    const base = { provider: "mock", model: "mock-1" };
    await expectInvalid(
      await api("/v1/agents", { body: { ...base, max_cost_usd: 2.5 } }, token),
      "max_cost_usd",
      /needs a price for model mock-1/,
    );
    // A shape error wins over the later checks.
    const shape = await expectInvalid(await api("/v1/agents", { body: { ...base, max_cost_usd: 2.5, max_steps: 0 } }, token), "max_steps");
    expect(shape.message).not.toMatch(/needs a price/);
    expect(await listAll(token)).toEqual([]);
    const stored = await createAgent(
      {
        retries: 2,
        max_cost_usd: 1,
        prices: { input: 1, output: 2 },
        compaction: { enabled: true, trigger_tokens: 5000, keep_last_messages: 4 },
      },
      token,
    );
    expect(stored).toMatchObject({
      retries: 2,
      max_cost_usd: 1,
      compaction: { enabled: true, trigger_tokens: 5000, keep_last_messages: 4 },
    });
  });

  it("applies the URL guard outside development (webhook url and base_url)", async () => {
    const app = createApp();
    const production = (init: ApiInit) =>
      app.fetch(apiRequest("/v1/agents", init), { ...env, ENVIRONMENT: "production" }, createExecutionContext());
    const base = { provider: "anthropic", model: "claude" };
    const tool = (url: string) => ({ ...base, tools: [{ type: "webhook", name: "hook", url }] });
    await expectInvalid(await production({ body: tool("http://example.com/hook") }), "tools.0.url", /https/);
    await expectInvalid(await production({ body: tool("https://localhost/hook") }), "tools.0.url", /localhost/);
    await expectInvalid(await production({ body: tool("https://10.0.0.8/hook") }), "tools.0.url", /private/);
    await expectInvalid(await production({ body: { ...base, base_url: "https://127.0.0.1:8080" } }), "base_url", /loopback/);
    expect((await production({ body: tool("https://hooks.example.com/x") })).status).toBe(201);
    expect((await production({ body: { ...base, base_url: "mock:" } })).status).toBe(201);
    // In development (the test Worker) local webhook URLs are fine.
    expect((await createAgent({ tools: [{ type: "webhook", name: "local", url: "http://127.0.0.1:9/x" }] })).tools).toHaveLength(1);
  });

  it("refuses more than the 128 tools OpenAI takes in a request, naming the limit, and stores nothing", async () => {
    const tenant = await createTenantToken(uniqueTenant());
    const tools = Array.from({ length: 129 }, (_, i) => ({ type: "client", name: `t${i}` }));
    await expectInvalid(await api("/v1/agents", { body: { provider: "openai", model: "gpt-4.1", tools } }, tenant), "tools", /128/);
    expect((await (await api("/v1/agents", {}, tenant)).json<{ data: unknown[] }>()).data).toEqual([]);
    expect((await api("/v1/agents", { body: { provider: "openai", model: "gpt-4.1", tools: tools.slice(0, 128) } }, tenant)).status).toBe(
      201,
    );
  });
});

describe("GET /v1/agents", () => {
  it("lists the tenant's live agents newest first, page by page", async () => {
    const token = await createTenantToken();
    const created: Agent[] = [];
    for (let i = 0; i < 5; i++) created.push(await createAgent({ name: `a${i}` }, token));
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const path: string = `/v1/agents?limit=2${cursor ? `&cursor=${cursor}` : ""}`;
      const body: Page<Agent> = await (await api(path, {}, token)).json();
      seen.push(...body.data.map((a) => a.id));
      cursor = body.next_cursor;
      pages++;
    } while (cursor !== null && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toEqual(newestFirst(created).map((a) => a.id));
    const first = await (await api("/v1/agents", {}, token)).json<Page<Agent>>();
    expect(first.data).toHaveLength(5);
    expect(first.next_cursor).toBeNull();
  });

  it("answers 400 for a bad limit or cursor", async () => {
    for (const query of ["limit=0", "limit=101", "limit=x", "cursor=bm90LWEtY3Vyc29y"]) {
      await expectInvalid(await api(`/v1/agents?${query}`), query.startsWith("limit") ? "query.limit" : "query.cursor");
    }
  });
});

describe("PATCH /v1/agents/{agent_id}", () => {
  it("changes only the given fields, increments version and returns the new agent", async () => {
    const agent = await createAgent({ id: uniqueId(), instructions: "old", metadata: { a: 1 } });
    const response = await patch(agent.id, { instructions: "new", metadata: { b: 2 }, base_url: "mock:" });
    expect(response.status).toBe(200);
    const changed = await response.json<Agent>();
    expect(changed).toEqual({
      ...agent,
      instructions: "new",
      metadata: { b: 2 },
      base_url: "mock:",
      version: 2,
      updated_at: changed.updated_at,
    });
    expect(changed.updated_at >= agent.updated_at).toBe(true);
    expect(await getAgent(agent.id)).toEqual(changed);
    const again = await (await patch(agent.id, { base_url: null, max_steps: 5 })).json<Agent>();
    expect(again).toMatchObject({ base_url: null, max_steps: 5, version: 3, instructions: "new" });
  });

  it("does not change version when nothing changes", async () => {
    const agent = await createAgent({ instructions: "same" });
    for (const body of [{}, { instructions: "same" }, { tools: [] }]) {
      const response = await patch(agent.id, body);
      expect(response.status).toBe(200);
      expect(await response.json<Agent>()).toEqual(agent);
    }
  });

  it("rejects bad patches with 400 and leaves the agent unchanged", async () => {
    const agent = await createAgent({ tools: [{ type: "client", name: "ask" }] });
    const cases: [unknown, string][] = [
      [{ temperature: 3 }, "temperature"],
      [{ id: "renamed" }, "id"],
      [{ version: 9 }, "version"],
      [{ model: "" }, "model"],
      [{ model: null }, "model"],
      [{ provider: "gemini" }, "provider"],
      [
        {
          tools: [
            { type: "client", name: "a" },
            { type: "builtin", name: "current_time" },
            { type: "client", name: "a" },
          ],
        },
        "tools.2.name",
      ],
      [{ tools: [{ type: "webhook", name: "w", url: "ssh://x" }] }, "tools.0.url"],
      [{ output_schema: { type: "array" } }, "output_schema.type"],
      [{ retries: 11 }, "retries"],
      [{ max_cost_usd: 1 }, "max_cost_usd"],
      [{ compaction: { enabled: true, trigger_tokens: 5 } }, "compaction.trigger_tokens"],
      [{ output_schema: { type: "object", properties: { a: { $ref: "#/nope" } } } }, "output_schema"],
    ];
    for (const [body, path] of cases) await expectInvalid(await patch(agent.id, body), path);
    expect((await patch(agent.id, "{oops")).status).toBe(400);
    expect(await getAgent(agent.id)).toEqual(agent);
  });

  it("answers 404 for an unknown agent", async () => {
    const response = await patch("no-such-agent", { instructions: "x" });
    expect(response.status).toBe(404);
    expect((await response.json<ErrorBody>()).error.type).toBe("not_found");
  });
});

describe("DELETE /v1/agents/{agent_id}", () => {
  it("deletes: then GET, PATCH and DELETE are 404, the list omits it and its id is never reused", async () => {
    const token = await createTenantToken();
    const id = uniqueId();
    await createAgent({ id }, token);
    const deleted = await api(`/v1/agents/${id}`, { method: "DELETE" }, token);
    expect(deleted.status).toBe(204);
    expect(await deleted.text()).toBe("");
    expect((await api(`/v1/agents/${id}`, {}, token)).status).toBe(404);
    expect((await patch(id, { instructions: "x" }, token)).status).toBe(404);
    expect((await api(`/v1/agents/${id}`, { method: "DELETE" }, token)).status).toBe(404);
    expect(await listAll(token)).toEqual([]);
    const reuse = await api("/v1/agents", { body: { id, provider: "mock", model: "m" } }, token);
    expect(reuse.status).toBe(409);
    expect((await reuse.json<ErrorBody>()).error.type).toBe("already_exists");
  });
});

describe("tenants", () => {
  it("answers 404 for another tenant's agent, exactly as for a missing one, and changes nothing", async () => {
    const owner = await createTenantToken(uniqueTenant("owner"));
    const stranger = await createTenantToken(uniqueTenant("stranger"));
    const agent = await createAgent({ id: uniqueId() }, owner);
    const missingId = uniqueId();
    const pairs: [(id: string) => Promise<Response>, string][] = [
      [(id) => api(`/v1/agents/${id}`, {}, stranger), "GET"],
      [(id) => patch(id, { instructions: "hijacked" }, stranger), "PATCH"],
      [(id) => api(`/v1/agents/${id}`, { method: "DELETE" }, stranger), "DELETE"],
    ];
    for (const [call, method] of pairs) {
      const foreign = await call(agent.id);
      const missing = await call(missingId);
      expect(foreign.status, method).toBe(404);
      expect(missing.status, method).toBe(404);
      const [a, b] = [await foreign.json<ErrorBody>(), await missing.json<ErrorBody>()];
      expect(a.error.message.replace(agent.id, "ID")).toBe(b.error.message.replace(missingId, "ID"));
      expect(a.error.type).toBe(b.error.type);
    }
    expect(await listAll(stranger)).toEqual([]);
    expect(await getAgent(agent.id, owner)).toEqual(agent);
  });

  it("gives the admin token the tenant 'default'", async () => {
    const agent = await createAgent({ id: uniqueId() });
    const row = await env.DB.prepare("SELECT tenant FROM agents WHERE id = ?").bind(agent.id).first<{ tenant: string }>();
    expect(row?.tenant).toBe("default");
  });
});

describe("findAgent", () => {
  it("returns the agent as the API shows it, and null when missing, deleted or foreign", async () => {
    const tenant = uniqueTenant();
    const token = await createTenantToken(tenant);
    const agent = await createAgent({ id: uniqueId(), tools: [{ type: "builtin", name: "current_time" }] }, token);
    expect(await findAgent(env.DB, tenant, agent.id)).toEqual(agent);
    expect(await findAgent(env.DB, "default", agent.id)).toBeNull();
    expect(await findAgent(env.DB, tenant, "missing")).toBeNull();
    await api(`/v1/agents/${agent.id}`, { method: "DELETE" }, token);
    expect(await findAgent(env.DB, tenant, agent.id)).toBeNull();
  });
});
