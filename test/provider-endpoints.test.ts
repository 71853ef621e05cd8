import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { isOperatorEndpoint } from "../src/providers/endpoints";
import { createProvider } from "../src/providers/index";
import { ProviderError } from "../src/providers/types";
import { api, createAgent, createTenantToken } from "./support/http";
import { runTurn } from "./support/runs";
import { keyOf, OPERATOR_GATEWAY_TOKEN, PROVIDERS, requestsOf, upstreamBase } from "./support/upstreams";

describe("isOperatorEndpoint", () => {
  const vars = {
    OPENAI_BASE_URL: "https://gateway.ai.cloudflare.com/v1/acc/gw/openai",
    ALLOWED_BASE_URLS: " https://proxy.example.com:8443/x ,not a url,",
  };

  it.each([
    "https://api.openai.com/v1",
    "https://API.OpenAI.com:443/v1/anything",
    "https://api.openai.com",
    "https://gateway.ai.cloudflare.com/v1/acc/gw/openai",
    "https://gateway.ai.cloudflare.com/v1/acc/gw/openai/responses",
    "https://proxy.example.com:8443/x",
    "https://proxy.example.com:8443/x/y",
  ])("allows %s (an operator endpoint: the provider's host, or under an operator prefix)", (url) => {
    expect(isOperatorEndpoint("openai", url, vars)).toBe(true);
  });

  it.each([
    "http://api.openai.com/v1",
    "https://api.openai.com:8443/v1",
    "https://api.openai.com.evil.example/v1",
    "https://api.openai.com@evil.example/v1",
    "https://evil.example/https://api.openai.com/v1",
    "https://proxy.example.com/x",
    "https://proxy.example.com:8443/",
    "https://proxy.example.com:8443/xy",
    "https://proxy.example.com:8443/y/x",
    // Another account's gateway on the same host: the tenant boundary is in the path.
    "https://gateway.ai.cloudflare.com/v1/acc/other-gateway/openai",
    "https://gateway.ai.cloudflare.com/v1/other-account/gw/openai",
    "https://gateway.ai.cloudflare.com/v1/acc/gw/../../other-account/gw/openai",
    "https://gateway.ai.cloudflare.com/v1/acc/gw/%2e%2e/%2E%2E/other-account/gw/openai",
    "https://gateway.ai.cloudflare.com/v1/acc/gw2/openai",
    // A proxy that decodes %2F would route this elsewhere.
    "https://gateway.ai.cloudflare.com/v1/acc/gw/..%2F..%2Fother/gw/openai",
    "https://api.anthropic.com",
    "not a url",
    "mock:",
  ])("refuses %s", (url) => {
    expect(isOperatorEndpoint("openai", url, vars)).toBe(false);
  });

  it("takes each provider's own default and variable", () => {
    expect(isOperatorEndpoint("anthropic", "https://api.anthropic.com/v1", {})).toBe(true);
    expect(isOperatorEndpoint("anthropic", "https://gateway.ai.cloudflare.com/v1/acc/gw/anthropic", vars)).toBe(false);
    expect(isOperatorEndpoint("anthropic", "https://gw.example/anthropic", { ANTHROPIC_BASE_URL: "https://gw.example/anthropic" })).toBe(
      true,
    );
    expect(isOperatorEndpoint("anthropic", "https://gw.example", { ANTHROPIC_BASE_URL: "https://gw.example/anthropic" })).toBe(false);
    // An entry that is a bare origin still allows every path under it.
    expect(isOperatorEndpoint("anthropic", "https://gw.example/any/path", { ALLOWED_BASE_URLS: "https://gw.example" })).toBe(true);
  });

  it("follows changed variables at once, though the parsed prefixes are kept per isolate", () => {
    const url = "https://proxy.example.com:8443/x/v1";
    expect(isOperatorEndpoint("openai", url, vars)).toBe(true);
    expect(isOperatorEndpoint("openai", url, { ...vars, ALLOWED_BASE_URLS: "https://other.example" })).toBe(false);
    expect(isOperatorEndpoint("openai", "https://other.example/v1", { ...vars, ALLOWED_BASE_URLS: "https://other.example" })).toBe(true);
    expect(isOperatorEndpoint("openai", url, { OPENAI_BASE_URL: url })).toBe(true);
    expect(isOperatorEndpoint("openai", url, {})).toBe(false);
  });
});

describe("a tenant pointing an agent at its own server (the key-theft attack)", () => {
  it.each(PROVIDERS)("%s: create and PATCH answer 400 naming base_url, and the server gets nothing", async (provider) => {
    const token = await createTenantToken();
    const bucket = crypto.randomUUID();
    const base_url = upstreamBase(env.FOREIGN_UPSTREAM_URL, bucket, provider);
    const created = await api("/v1/agents", { body: { provider, model: "gpt-x", base_url } }, token);
    expect(created.status).toBe(400);
    const body = await created.json<{ error: { type: string; details: { fields: { path: string; message: string }[] } } }>();
    expect(body.error.type).toBe("invalid_request");
    expect(body.error.details.fields).toEqual([
      { path: "base_url", message: expect.stringContaining("is not one of the operator's endpoints") },
    ]);
    expect((await api("/v1/agents", {}, token).then((r) => r.json<{ data: unknown[] }>())).data).toEqual([]);

    const agent = await createAgent({ provider, model: "m", base_url: upstreamBase(env.GATEWAY_URL, bucket, provider) }, token);
    const patched = await api(`/v1/agents/${agent.id}`, { method: "PATCH", body: { base_url } }, token);
    expect(patched.status).toBe(400);
    expect((await patched.json<{ error: { details: { fields: { path: string }[] } } }>()).error.details.fields[0]?.path).toBe("base_url");
    const stored = await api(`/v1/agents/${agent.id}`, {}, token).then((r) => r.json<{ base_url: string; version: number }>());
    expect(stored).toMatchObject({ base_url: agent.base_url, version: 1 });
    expect(await requestsOf(env.FOREIGN_UPSTREAM_URL, bucket)).toEqual([]);
  });

  it.each(PROVIDERS)(
    "%s: a stored agent whose endpoint is no longer allowed is refused when a run starts or continues",
    async (provider) => {
      const token = await createTenantToken();
      const bucket = crypto.randomUUID();
      const agent = await createAgent({ provider, model: "m", base_url: upstreamBase(env.GATEWAY_URL, bucket, provider) }, token);
      const first = await runTurn(agent.id, { input: "hello" }, token);
      expect(first.status).toBe("completed");
      // As if ALLOWED_BASE_URLS had listed the server when the agent was stored, and no longer does.
      const definition = { ...agent, base_url: upstreamBase(env.FOREIGN_UPSTREAM_URL, bucket, provider) };
      await env.DB.prepare("UPDATE agents SET definition = json_set(definition, '$.base_url', ?) WHERE id = ?")
        .bind(definition.base_url, agent.id)
        .run();
      const turn = await api(`/v1/agents/${agent.id}/runs`, { body: { input: "again", session_id: first.session_id } }, token);
      expect(turn.status).toBe(400);
      expect((await turn.json<{ error: { details: { fields: { path: string }[] } } }>()).error.details.fields[0]?.path).toBe("base_url");
      const branch = await api(`/v1/agents/${agent.id}/runs/${first.id}/continue`, { body: { input: "more" } }, token);
      expect(branch.status).toBe(400);
      expect(await requestsOf(env.FOREIGN_UPSTREAM_URL, bucket)).toEqual([]);
      const session = await api(`/v1/sessions/${first.session_id}`, {}, token).then((r) =>
        r.json<{ run_count: number; active_run_id: string | null }>(),
      );
      expect(session).toMatchObject({ run_count: 1, active_run_id: null });
    },
  );

  it.each(PROVIDERS)("%s: the adapter itself refuses to send the operator's key there (auth_error)", async (provider) => {
    const bucket = crypto.randomUUID();
    const adapter = createProvider({ provider, base_url: upstreamBase(env.FOREIGN_UPSTREAM_URL, bucket, provider) }, env);
    const error = await adapter
      .call(
        { model: "m", messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }], tools: [], max_output_tokens: 16, attempt: 1 },
        {},
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({
      type: "auth_error",
      retryable: false,
      message: expect.stringContaining("not one of the operator's endpoints"),
    });
    expect(await requestsOf(env.FOREIGN_UPSTREAM_URL, bucket)).toEqual([]);
  });
});

describe("the operator's endpoints", () => {
  it.each(PROVIDERS)(
    "%s: another path on the operator's gateway host is not the operator's (two tenants' gateways on one host)",
    async (provider) => {
      const token = await createTenantToken();
      const bucket = crypto.randomUUID();
      // `/b/…` is an operator prefix (vitest.config.ts); `/bx/…` is another gateway on the same host.
      const theirs = `${env.GATEWAY_URL}/bx/${bucket}${provider === "anthropic" ? "" : "/v1"}`;
      const created = await api("/v1/agents", { body: { provider, model: "m", base_url: theirs } }, token);
      expect(created.status).toBe(400);
      const body = await created.json<{ error: { details: { fields: { path: string; message: string }[] } } }>();
      expect(body.error.details.fields).toEqual([
        { path: "base_url", message: expect.stringContaining(`${new URL(theirs).origin}/bx/${bucket}`) },
      ]);
      const escaping = await api("/v1/agents", { body: { provider, model: "m", base_url: `${env.GATEWAY_URL}/b/../bx/${bucket}` } }, token);
      expect(escaping.status).toBe(400);
      const adapter = createProvider({ provider, base_url: theirs }, env);
      const error = await adapter
        .call(
          {
            model: "m",
            messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
            tools: [],
            max_output_tokens: 16,
            attempt: 1,
          },
          {},
        )
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ type: "auth_error", message: expect.stringContaining("not one of the operator's endpoints") });
      expect(await requestsOf(env.GATEWAY_URL, bucket)).toEqual([]);
    },
  );

  it.each(PROVIDERS)("%s: an allowed gateway gets the operator's key and PROVIDER_HEADERS, under any path", async (provider) => {
    const bucket = crypto.randomUUID();
    const agent = await createAgent({ provider, model: "m", base_url: upstreamBase(env.GATEWAY_URL, bucket, provider) });
    const run = await runTurn(agent.id, { input: "hello gateway" });
    expect(run).toMatchObject({ status: "completed", output: "You said: hello gateway" });
    const [request, ...more] = await requestsOf(env.GATEWAY_URL, bucket);
    expect(more).toEqual([]);
    expect(request?.headers["cf-aig-authorization"]).toBe(`Bearer ${OPERATOR_GATEWAY_TOKEN}`);
    const key = { anthropic: env.ANTHROPIC_API_KEY, openai: env.OPENAI_API_KEY, "openai-chat": env.OPENAI_CHAT_API_KEY }[provider];
    expect(keyOf(request?.headers)).toBe(key);
  });

  it.each(PROVIDERS)("%s: a redirect from the operator's endpoint is not followed, so the key stays there", async (provider) => {
    const bucket = crypto.randomUUID();
    const agent = await createAgent({ provider, model: "m", base_url: upstreamBase(env.GATEWAY_URL, bucket, provider, "redirect") });
    const run = await runTurn(agent.id, { input: "hello" });
    expect(run.status).toBe("error");
    expect(run.error).toMatchObject({ type: "provider_error", retryable: false, status: 307 });
    expect(await requestsOf(env.GATEWAY_URL, bucket)).toHaveLength(1);
    expect(await requestsOf(env.FOREIGN_UPSTREAM_URL, bucket)).toEqual([]);
  });
});
