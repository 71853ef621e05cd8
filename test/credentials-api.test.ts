import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../src/api/app";
import { CredentialError, loadCredential } from "../src/credentials";
import type { CredentialInfo } from "../src/credentials";
import { api, apiRequest, createAgent, createTenantToken, expectInvalid, uniqueTenant } from "./support/http";
import type { ApiInit } from "./support/http";

type Page<T> = { data: T[]; next_cursor: string | null };
type ErrorBody = { error: { type: string; message: string; details: { agent_ids?: string[] } } };

const uniqueId = (prefix = "cred") => `${prefix}-${crypto.randomUUID()}`;
const uniqueSecret = () => `sk-tenant-${crypto.randomUUID()}`;

/** A credential body with a fresh id, key and gateway header value. */
function credentialBody(fields: Record<string, unknown> = {}) {
  return {
    id: uniqueId(),
    provider: "openai",
    api_key: uniqueSecret(),
    base_url: "https://gateway.example.com/v1/acct/gw/openai",
    headers: { "cf-aig-authorization": `Bearer gw-${crypto.randomUUID()}` },
    ...fields,
  };
}

/** Creates a credential and returns its body (with the secrets) and the answer. */
async function createCredential(token: string, fields: Record<string, unknown> = {}) {
  const body = credentialBody(fields);
  const response = await api("/v1/credentials", { body }, token);
  expect(response.status).toBe(201);
  const text = await response.text();
  return { body, text, info: JSON.parse(text) as CredentialInfo };
}

/** The secret texts of a credential body: its key and every header value. */
const secretsOf = (body: { api_key: string; headers: Record<string, string> }) => [body.api_key, ...Object.values(body.headers)];

function expectNoSecret(text: string, body: { api_key: string; headers: Record<string, string> }) {
  for (const secret of secretsOf(body)) expect(text).not.toContain(secret);
  expect(text).not.toContain(env.CREDENTIALS_KEY);
}

const getCredential = (id: string, token: string) => api(`/v1/credentials/${id}`, {}, token);
const deleteCredential = (id: string, token: string) => api(`/v1/credentials/${id}`, { method: "DELETE" }, token);

async function listAll(token: string): Promise<{ data: CredentialInfo[]; text: string }> {
  const response = await api("/v1/credentials?limit=100", {}, token);
  expect(response.status).toBe(200);
  const text = await response.text();
  return { data: (JSON.parse(text) as Page<CredentialInfo>).data, text };
}

async function storedRow(tenant: string, id: string) {
  return env.DB.prepare("SELECT * FROM credentials WHERE tenant = ? AND id = ?").bind(tenant, id).first<Record<string, unknown>>();
}

/** The Worker with other variables (ENVIRONMENT, CREDENTIALS_KEY), as a deployment would have them. */
function workerWith(vars: Record<string, string | undefined>) {
  const app = createApp();
  return (init: ApiInit, token: string) =>
    app.fetch(apiRequest("/v1/credentials", init, token), { ...env, ...vars }, createExecutionContext());
}

describe("POST /v1/credentials", () => {
  it("stores a credential and answers it without the key or header values", async () => {
    const token = await createTenantToken();
    const { body, text, info } = await createCredential(token);
    expect(info).toEqual({
      id: body.id,
      type: "provider",
      provider: "openai",
      base_url: body.base_url,
      header_names: ["cf-aig-authorization"],
      created_at: expect.stringMatching(/Z$/),
    });
    expectNoSecret(text, body);

    const read = await getCredential(body.id, token);
    expect(read.status).toBe(200);
    const readText = await read.text();
    expect(JSON.parse(readText)).toEqual(info);
    expectNoSecret(readText, body);

    const listed = await listAll(token);
    expect(listed.data).toEqual([info]);
    expectNoSecret(listed.text, body);
  });

  it("fills the defaults: no base_url, no headers", async () => {
    const token = await createTenantToken();
    const id = uniqueId();
    const response = await api("/v1/credentials", { body: { id, provider: "anthropic", api_key: uniqueSecret() } }, token);
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({
      id,
      type: "provider",
      provider: "anthropic",
      base_url: null,
      header_names: [],
      created_at: expect.any(String),
    });
  });

  it("keeps the key and header values encrypted in D1, bound to the tenant and id", async () => {
    const tenant = uniqueTenant();
    const token = await createTenantToken(tenant);
    const { body } = await createCredential(token);
    const row = await storedRow(tenant, body.id);
    expect(row).toMatchObject({ tenant, id: body.id, provider: "openai", header_names: '["cf-aig-authorization"]' });
    expect(row?.ciphertext).toMatch(/^v1\.[A-Za-z0-9+/=]+\.[A-Za-z0-9+/=]+$/);
    expectNoSecret(JSON.stringify(row), body);
  });

  it("replays an Idempotency-Key retry without the secret, and stores none in the key's record", async () => {
    const tenant = uniqueTenant();
    const token = await createTenantToken(tenant);
    const body = credentialBody();
    const send = () => api("/v1/credentials", { body, headers: { "idempotency-key": "cred-once" } }, token);
    const first = await send();
    expect(first.status).toBe(201);
    const firstText = await first.text();
    const again = await send();
    expect(again.status).toBe(201);
    const againText = await again.text();
    expect(JSON.parse(againText)).toEqual(JSON.parse(firstText));
    expectNoSecret(againText, body);
    const record = await env.DB.prepare("SELECT * FROM idempotency_keys WHERE tenant = ? AND key = ?").bind(tenant, "cred-once").first();
    expect(record).not.toBeNull();
    expectNoSecret(JSON.stringify(record), body);
    expect((await listAll(token)).data).toHaveLength(1);
  });

  it("refuses an id the tenant already has with 409, and keeps the first", async () => {
    const tenant = uniqueTenant();
    const token = await createTenantToken(tenant);
    const { body } = await createCredential(token);
    const response = await api("/v1/credentials", { body: { ...body, api_key: uniqueSecret() } }, token);
    expect(response.status).toBe(409);
    expect((await response.json<ErrorBody>()).error.type).toBe("already_exists");
    const { secret } = await loadCredential(env, tenant, body.id);
    expect(secret.api_key).toBe(body.api_key);
  });

  it("names the field of a bad input and stores nothing", async () => {
    const token = await createTenantToken();
    const post = (fields: Record<string, unknown>) => api("/v1/credentials", { body: credentialBody(fields) }, token);
    await expectInvalid(await post({ id: "no/slash" }), "id");
    await expectInvalid(await post({ id: "" }), "id");
    await expectInvalid(await post({ provider: "mock" }), "provider");
    await expectInvalid(await post({ api_key: "" }), "api_key");
    await expectInvalid(await post({ api_key: "sk-1\nX-Injected: yes" }), "api_key", /line breaks/);
    await expectInvalid(await post({ api_key: "k".repeat(4097) }), "api_key");
    await expectInvalid(await post({ headers: { host: "evil.example" } }), "headers.host", /set by Agentry/);
    await expectInvalid(
      await post({ headers: { "cf-aig-authorization": "Bearer x\r\nX-Injected: yes" } }),
      "headers.cf-aig-authorization",
      /line breaks/,
    );
    await expectInvalid(await post({ base_url: "ftp://files.example.com" }), "base_url", /http/);
    await expectInvalid(await post({ base_url: "not a url" }), "base_url");
    await expectInvalid(await post({ secret: "x" }), "secret", /unknown field/);
    const withoutKey: Record<string, unknown> = credentialBody();
    delete withoutKey.api_key;
    await expectInvalid(await api("/v1/credentials", { body: withoutKey }, token), "api_key");
    expect((await listAll(token)).data).toEqual([]);
  });

  it("applies the outbound URL rule to base_url outside development", async () => {
    const token = await createTenantToken();
    const production = workerWith({ ENVIRONMENT: "production" });
    await expectInvalid(await production({ body: credentialBody({ base_url: "http://gateway.example.com" }) }, token), "base_url", /https/);
    await expectInvalid(await production({ body: credentialBody({ base_url: "https://10.0.0.8/v1" }) }, token), "base_url", /private/);
    await expectInvalid(await production({ body: credentialBody({ base_url: "https://localhost:8443" }) }, token), "base_url", /localhost/);
    expect((await production({ body: credentialBody() }, token)).status).toBe(201);
    // Development (the test Worker) allows a local gateway.
    expect((await api("/v1/credentials", { body: credentialBody({ base_url: "http://127.0.0.1:9/v1" }) }, token)).status).toBe(201);
  });

  it("answers 500 naming CREDENTIALS_KEY when the operator has not set a valid one, and stores nothing", async () => {
    const token = await createTenantToken();
    for (const key of [undefined, btoa("sixteen-bytes-ok"), "not base64 at all!"]) {
      const body = credentialBody();
      const response = await workerWith({ CREDENTIALS_KEY: key })({ body }, token);
      expect(response.status).toBe(500);
      const text = await response.text();
      const { error } = JSON.parse(text) as ErrorBody;
      expect(error.type).toBe("internal");
      expect(error.message).toMatch(/CREDENTIALS_KEY/);
      expectNoSecret(text, body);
      expect((await getCredential(body.id, token)).status).toBe(404);
    }
  });
});

describe("GET /v1/credentials", () => {
  it("lists the tenant's credentials newest first, page by page", async () => {
    const token = await createTenantToken();
    const created: CredentialInfo[] = [];
    for (let i = 0; i < 5; i++) created.push((await createCredential(token, { id: `c${i}` })).info);
    const expected = [...created].sort((a, b) => (`${b.created_at} ${b.id}` < `${a.created_at} ${a.id}` ? -1 : 1));
    const seen: CredentialInfo[] = [];
    let cursor: string | null = null;
    do {
      const path: string = `/v1/credentials?limit=2${cursor ? `&cursor=${cursor}` : ""}`;
      const response = await api(path, {}, token);
      expect(response.status).toBe(200);
      const page: Page<CredentialInfo> = await response.json();
      expect(page.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.data);
      cursor = page.next_cursor;
    } while (cursor !== null);
    expect(seen).toEqual(expected);
  });

  it("refuses an unknown query parameter", async () => {
    const token = await createTenantToken();
    await expectInvalid(await api("/v1/credentials?provider=openai", {}, token), "query.provider", /unknown field/);
  });
});

describe("tenant scope", () => {
  it("hides a credential from another tenant exactly as if it did not exist", async () => {
    const owner = await createTenantToken();
    const other = await createTenantToken();
    const { body, info } = await createCredential(owner);
    const absent = await getCredential(uniqueId(), other);
    const foreign = await getCredential(body.id, other);
    expect(foreign.status).toBe(404);
    expect(absent.status).toBe(404);
    expect((await foreign.json<ErrorBody>()).error.type).toBe("not_found");
    expect((await deleteCredential(body.id, other)).status).toBe(404);
    expect((await listAll(other)).data).toEqual([]);
    // The other tenant may use the same id for its own credential; the owner's is untouched.
    const { info: theirs } = await createCredential(other, { id: body.id, provider: "anthropic" });
    expect(theirs.provider).toBe("anthropic");
    expect(await (await getCredential(body.id, owner)).json()).toEqual(info);
  });
});

describe("DELETE /v1/credentials/{id}", () => {
  it("deletes a credential no agent names", async () => {
    const token = await createTenantToken();
    const { body } = await createCredential(token);
    expect((await deleteCredential(body.id, token)).status).toBe(204);
    expect((await getCredential(body.id, token)).status).toBe(404);
    expect((await deleteCredential(body.id, token)).status).toBe(404);
  });

  it("refuses while a live agent names it (409 credential_in_use), allows it once the agent lets go", async () => {
    const token = await createTenantToken();
    const { body } = await createCredential(token);
    const agentFields = { provider: "openai", model: "gpt-test", base_url: "mock:", credential: body.id };
    const kept = await createAgent(agentFields, token);
    const deleted = await createAgent(agentFields, token);

    const refused = await deleteCredential(body.id, token);
    expect(refused.status).toBe(409);
    const { error } = await refused.json<ErrorBody>();
    expect(error.type).toBe("credential_in_use");
    expect(error.details.agent_ids).toEqual([kept.id, deleted.id].sort());
    expect(error.message).toContain(kept.id);
    expect(error.message).toContain(deleted.id);
    expect((await getCredential(body.id, token)).status).toBe(200);

    expect((await api(`/v1/agents/${deleted.id}`, { method: "DELETE" }, token)).status).toBe(204);
    const stillRefused = await deleteCredential(body.id, token);
    expect(stillRefused.status).toBe(409);
    expect((await stillRefused.json<ErrorBody>()).error.details.agent_ids).toEqual([kept.id]);

    expect((await api(`/v1/agents/${kept.id}`, { method: "PATCH", body: { credential: null } }, token)).status).toBe(200);
    expect((await deleteCredential(body.id, token)).status).toBe(204);
    expect((await getCredential(body.id, token)).status).toBe(404);
  });

  it("is not held by another tenant's agent naming the same id", async () => {
    const owner = await createTenantToken();
    const other = await createTenantToken();
    const { body } = await createCredential(owner);
    await createCredential(other, { id: body.id });
    await createAgent({ provider: "openai", model: "gpt-test", base_url: "mock:", credential: body.id }, other);
    expect((await deleteCredential(body.id, owner)).status).toBe(204);
  });
});

describe("loadCredential", () => {
  it("returns the decrypted key and headers with the credential", async () => {
    const tenant = uniqueTenant();
    const token = await createTenantToken(tenant);
    const { body, info } = await createCredential(token);
    expect(await loadCredential(env, tenant, body.id)).toEqual({ info, secret: { api_key: body.api_key, headers: body.headers } });
  });

  it("throws CredentialError for a credential the tenant does not have", async () => {
    const tenant = uniqueTenant();
    const { body } = await createCredential(await createTenantToken());
    await expect(loadCredential(env, tenant, body.id)).rejects.toThrow(CredentialError);
    await expect(loadCredential(env, tenant, body.id)).rejects.toThrow(body.id);
  });

  it("does not decrypt a row moved to another tenant or id", async () => {
    const tenant = uniqueTenant();
    const thief = uniqueTenant();
    const { body } = await createCredential(await createTenantToken(tenant));
    await env.DB.prepare("UPDATE credentials SET tenant = ? WHERE tenant = ? AND id = ?").bind(thief, tenant, body.id).run();
    await expect(loadCredential(env, thief, body.id)).rejects.toThrow(CredentialError);
    const renamed = uniqueId();
    await env.DB.prepare("UPDATE credentials SET tenant = ?, id = ? WHERE tenant = ? AND id = ?")
      .bind(tenant, renamed, thief, body.id)
      .run();
    await expect(loadCredential(env, tenant, renamed)).rejects.toThrow(CredentialError);
  });

  it("says the key changed, without any secret, when CREDENTIALS_KEY was rotated", async () => {
    const tenant = uniqueTenant();
    const { body } = await createCredential(await createTenantToken(tenant));
    const rotated = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
    const error = await loadCredential({ DB: env.DB, CREDENTIALS_KEY: rotated }, tenant, body.id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CredentialError);
    const { message } = error as CredentialError;
    expect(message).toContain(body.id);
    expect(message).toMatch(/CREDENTIALS_KEY has changed/);
    expect(message).toMatch(/store the credential again/);
    expectNoSecret(message, body);
    expect(message).not.toContain(rotated);
  });

  it("throws CredentialError naming CREDENTIALS_KEY when it is missing", async () => {
    const tenant = uniqueTenant();
    const { body } = await createCredential(await createTenantToken(tenant));
    await expect(loadCredential({ DB: env.DB }, tenant, body.id)).rejects.toThrow(/CREDENTIALS_KEY/);
  });
});
