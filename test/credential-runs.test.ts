import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { credentialsKey, encryptSecret } from "../src/credentials/crypto";
import { createProvider } from "../src/providers/index";
import { ProviderError } from "../src/providers/types";
import { api, createAgent, createTenantToken, expectInvalid } from "./support/http";
import { runTurn } from "./support/runs";
import { keyOf, OPERATOR_GATEWAY_TOKEN, OPERATOR_KEYS, PROVIDERS, requestsOf, upstreamBase } from "./support/upstreams";

const TENANT_KEY = "tenant-own-key-6d0c2b";
const TENANT_HEADER = "tenant-gateway-token-17aa";
const OPERATOR_SECRETS = [...OPERATOR_KEYS, OPERATOR_GATEWAY_TOKEN];

async function createCredential(token: string, body: Record<string, unknown>): Promise<void> {
  const response = await api(
    "/v1/credentials",
    { body: { api_key: TENANT_KEY, headers: { "x-tenant-gateway": TENANT_HEADER }, ...body } },
    token,
  );
  expect(response.status).toBe(201);
}

describe("an agent on a tenant's own credential", () => {
  it.each(PROVIDERS)("%s: its upstream gets the tenant's key and headers, never the operator's", async (provider) => {
    const token = await createTenantToken();
    const bucket = crypto.randomUUID();
    await createCredential(token, { id: "mine", provider });
    const agent = await createAgent(
      { provider, model: "m", credential: "mine", base_url: upstreamBase(env.FOREIGN_UPSTREAM_URL, bucket, provider) },
      token,
    );
    const run = await runTurn(agent.id, { input: "hello from my key" }, token);
    expect(run).toMatchObject({ status: "completed", output: "You said: hello from my key" });
    const requests = await requestsOf(env.FOREIGN_UPSTREAM_URL, bucket);
    expect(requests).toHaveLength(1);
    expect(keyOf(requests[0]?.headers)).toBe(TENANT_KEY);
    expect(requests[0]?.headers["x-tenant-gateway"]).toBe(TENANT_HEADER);
    const seen = JSON.stringify(requests);
    for (const secret of OPERATOR_SECRETS) expect(seen).not.toContain(secret);
  });

  it.each(PROVIDERS)("%s: the credential's base_url serves an agent that has none", async (provider) => {
    const token = await createTenantToken();
    const bucket = crypto.randomUUID();
    await createCredential(token, { id: "gw", provider, base_url: upstreamBase(env.FOREIGN_UPSTREAM_URL, bucket, provider) });
    const agent = await createAgent({ provider, model: "m", credential: "gw" }, token);
    expect((await runTurn(agent.id, { input: "hi" }, token)).status).toBe("completed");
    expect(keyOf((await requestsOf(env.FOREIGN_UPSTREAM_URL, bucket))[0]?.headers)).toBe(TENANT_KEY);
  });

  it("on the operator's gateway: the tenant's key, with the operator's gateway headers", async () => {
    const token = await createTenantToken();
    const bucket = crypto.randomUUID();
    await createCredential(token, { id: "byok", provider: "openai" });
    const agent = await createAgent(
      { provider: "openai", model: "m", credential: "byok", base_url: upstreamBase(env.GATEWAY_URL, bucket, "openai") },
      token,
    );
    expect((await runTurn(agent.id, { input: "hi" }, token)).status).toBe("completed");
    const [request] = await requestsOf(env.GATEWAY_URL, bucket);
    expect(keyOf(request?.headers)).toBe(TENANT_KEY);
    expect(request?.headers["x-tenant-gateway"]).toBe(TENANT_HEADER);
    expect(request?.headers["cf-aig-authorization"]).toBe(`Bearer ${OPERATOR_GATEWAY_TOKEN}`);
  });

  it("is refused a credential that is another tenant's (404), missing (404), for another provider or on mock (400)", async () => {
    const owner = await createTenantToken();
    const other = await createTenantToken();
    await createCredential(owner, { id: "theirs", provider: "openai" });
    const base_url = upstreamBase(env.FOREIGN_UPSTREAM_URL, "x", "openai");
    for (const [token, credential] of [
      [other, "theirs"],
      [owner, "missing"],
    ] as const) {
      const response = await api("/v1/agents", { body: { provider: "openai", model: "m", credential, base_url } }, token);
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ error: { type: "not_found", message: `Credential ${credential} not found`, details: {} } });
    }
    await expectInvalid(
      await api("/v1/agents", { body: { provider: "anthropic", model: "m", credential: "theirs" } }, owner),
      "credential",
    );
    await expectInvalid(await api("/v1/agents", { body: { provider: "mock", model: "m", credential: "theirs" } }, owner), "credential");
    const agent = await createAgent({ provider: "openai", model: "m", base_url: "mock:" }, other);
    const patched = await api(`/v1/agents/${agent.id}`, { method: "PATCH", body: { credential: "theirs", base_url } }, other);
    expect(patched.status).toBe(404);
    expect((await api("/v1/agents", {}, other).then((r) => r.json<{ data: unknown[] }>())).data).toHaveLength(1);
  });

  it("ends runs with auth_error naming the credential when CREDENTIALS_KEY was rotated", async () => {
    const tenant = `rot-${crypto.randomUUID()}`;
    const token = await createTenantToken(tenant);
    const bucket = crypto.randomUUID();
    await createCredential(token, { id: "old", provider: "anthropic" });
    // The row as a previous CREDENTIALS_KEY wrote it.
    const previous = await credentialsKey(btoa("a previous credentials key 32 b!"));
    const stored = await encryptSecret(previous, tenant, "old", { api_key: TENANT_KEY, headers: {} });
    await env.DB.prepare("UPDATE credentials SET ciphertext = ? WHERE tenant = ? AND id = ?").bind(stored, tenant, "old").run();
    const agent = await createAgent(
      { provider: "anthropic", model: "m", credential: "old", base_url: upstreamBase(env.FOREIGN_UPSTREAM_URL, bucket, "anthropic") },
      token,
    );
    const run = await runTurn(agent.id, { input: "hi" }, token);
    expect(run.status).toBe("error");
    expect(run.error).toEqual({
      type: "auth_error",
      message:
        "Credential old cannot be decrypted: CREDENTIALS_KEY has changed since it was stored (or the stored value was altered); store the credential again",
      retryable: false,
    });
    expect(await requestsOf(env.FOREIGN_UPSTREAM_URL, bucket)).toEqual([]);
  });

  it("makes a credential store that does not answer a retryable failure of the call, not the end of the run", async () => {
    const failingDb = {
      prepare: () => {
        throw new Error("D1_ERROR: network connection lost");
      },
    } as unknown as D1Database;
    const adapter = createProvider(
      { provider: "openai", credential: "any", base_url: upstreamBase(env.FOREIGN_UPSTREAM_URL, "x", "openai") },
      { ...env, DB: failingDb },
      "t",
    );
    const error = await adapter
      .call(
        { model: "m", messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }], tools: [], max_output_tokens: 16, attempt: 1 },
        {},
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ type: "provider_error", retryable: true, message: "Credential any could not be read; try again" });
  });
});
