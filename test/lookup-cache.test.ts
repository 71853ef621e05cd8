import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../src/api/app";
import { TtlCache } from "../src/core/ttl-cache";
import { hashToken } from "../src/api/auth";
import { ADMIN_TOKEN, api, apiRequest, createAgent, createTenantToken, type ApiInit, type ErrorBody } from "./support/http";
import { runTurn } from "./support/runs";
import { keyOf, requestsOf, upstreamBase } from "./support/upstreams";

const app = createApp();

/** A request to the Worker's app in this isolate, with `LOOKUP_CACHE_MS` set as given (undefined = the default). */
async function withCacheMs(cacheMs: string | undefined, path: string, init: ApiInit, token: string): Promise<Response> {
  const ctx = createExecutionContext();
  const response = await app.fetch(apiRequest(path, init, token), { ...env, LOOKUP_CACHE_MS: cacheMs }, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

describe("TtlCache", () => {
  it("serves an entry only while it is younger than the allowed age", () => {
    let now = 1_000;
    const cache = new TtlCache<string>(10, () => now);
    cache.set("k", "v", cache.ticket());
    expect(cache.get("k", 100)).toBe("v");
    now += 99;
    expect(cache.get("k", 100)).toBe("v");
    expect(cache.get("k", 50)).toBeUndefined();
    cache.set("k", "v", cache.ticket());
    now += 100;
    expect(cache.get("k", 100)).toBeUndefined();
  });

  it("never stores a value read before an invalidation", () => {
    const cache = new TtlCache<string>(10, () => 0);
    const ticket = cache.ticket();
    cache.delete("other");
    cache.set("k", "stale", ticket);
    expect(cache.get("k", 1_000)).toBeUndefined();
    const before = cache.ticket();
    cache.deleteWhere(() => false);
    cache.set("k", "stale", before);
    expect(cache.get("k", 1_000)).toBeUndefined();
  });

  it("forgets matching entries and keeps at most its bound, dropping the oldest", () => {
    const cache = new TtlCache<number>(2, () => 0);
    cache.set("a", 1, cache.ticket());
    cache.set("b", 2, cache.ticket());
    cache.set("c", 3, cache.ticket());
    expect([cache.get("a", 1), cache.get("b", 1), cache.get("c", 1)]).toEqual([undefined, 2, 3]);
    cache.deleteWhere((value) => value === 2);
    expect([cache.get("b", 1), cache.get("c", 1)]).toEqual([undefined, 3]);
  });
});

/** The id of the key behind `token`, read from D1. */
async function keyIdOf(token: string): Promise<string> {
  const row = await env.DB.prepare("SELECT id FROM api_keys WHERE key_hash = ?")
    .bind(await hashToken(token))
    .first<{ id: string }>();
  if (!row) throw new Error("no such key");
  return row.id;
}

describe("API keys served from the isolate's cache", () => {
  it("refuses a key revoked in this isolate at once, though it was just served from the cache", async () => {
    const token = await createTenantToken();
    expect((await withCacheMs(undefined, "/v1/agents", {}, token)).status).toBe(200);
    expect((await withCacheMs(undefined, "/v1/agents", {}, token)).status).toBe(200);
    expect((await withCacheMs(undefined, `/v1/keys/${await keyIdOf(token)}`, { method: "DELETE" }, ADMIN_TOKEN)).status).toBe(204);
    const refused = await withCacheMs(undefined, "/v1/agents", {}, token);
    expect(refused.status).toBe(401);
    expect((await refused.json<ErrorBody>()).error.type).toBe("unauthorized");
  });

  it("refuses a key revoked through another isolate once the cache time has passed", async () => {
    const token = await createTenantToken();
    expect((await withCacheMs("60000", "/v1/agents", {}, token)).status).toBe(200);
    // Another isolate revokes it: the row goes, this isolate's cache is not told.
    await env.DB.prepare("DELETE FROM api_keys WHERE id = ?")
      .bind(await keyIdOf(token))
      .run();
    // Within the bound this isolate still knows the key (the documented stale window) ...
    expect((await withCacheMs("60000", "/v1/agents", {}, token)).status).toBe(200);
    // ... and not once the bound has passed (the cache time set to 0: every entry is older than that).
    expect((await withCacheMs("0", "/v1/agents", {}, token)).status).toBe(401);
    expect((await withCacheMs("60000", "/v1/agents", {}, token)).status).toBe(401);
  });

  it("with the cache off, refuses a key revoked through another isolate at once", async () => {
    const token = await createTenantToken();
    expect((await withCacheMs("0", "/v1/agents", {}, token)).status).toBe(200);
    await env.DB.prepare("DELETE FROM api_keys WHERE id = ?")
      .bind(await keyIdOf(token))
      .run();
    expect((await withCacheMs("0", "/v1/agents", {}, token)).status).toBe(401);
  });
});

describe("tenant credentials served from the isolate's cache", () => {
  it("never uses a credential after its delete answered: the one stored again under its id is used", async () => {
    const token = await createTenantToken();
    const bucket = crypto.randomUUID();
    const base_url = upstreamBase(env.FOREIGN_UPSTREAM_URL, bucket, "anthropic");
    const store = (api_key: string) => api("/v1/credentials", { body: { id: "mine", provider: "anthropic", api_key } }, token);
    expect((await store("first-tenant-key-1b9e")).status).toBe(201);
    const first = await createAgent({ provider: "anthropic", model: "m", credential: "mine", base_url }, token);
    expect((await runTurn(first.id, { input: "one" }, token)).status).toBe("completed");
    expect((await runTurn(first.id, { input: "two" }, token)).status).toBe("completed");
    expect((await api(`/v1/agents/${first.id}`, { method: "DELETE" }, token)).status).toBe(204);
    expect((await api("/v1/credentials/mine", { method: "DELETE" }, token)).status).toBe(204);
    expect((await store("second-tenant-key-70c4")).status).toBe(201);
    const second = await createAgent({ provider: "anthropic", model: "m", credential: "mine", base_url }, token);
    expect((await runTurn(second.id, { input: "three" }, token)).status).toBe("completed");
    const keys = (await requestsOf(env.FOREIGN_UPSTREAM_URL, bucket)).map((request) => keyOf(request.headers));
    expect(keys).toEqual(["first-tenant-key-1b9e", "first-tenant-key-1b9e", "second-tenant-key-70c4"]);
  });
});

describe("the admin token's hash, kept per isolate", () => {
  it("follows a changed ADMIN_TOKEN: the old token is refused and the new one accepted at once", async () => {
    const send = async (admin: string, token: string) => {
      const ctx = createExecutionContext();
      const response = await app.fetch(apiRequest("/v1/keys", {}, token), { ...env, ADMIN_TOKEN: admin }, ctx);
      await waitOnExecutionContext(ctx);
      return response.status;
    };
    expect(await send(ADMIN_TOKEN, ADMIN_TOKEN)).toBe(200);
    expect(await send("a-rotated-admin-token-5e1f", ADMIN_TOKEN)).toBe(401);
    expect(await send("a-rotated-admin-token-5e1f", "a-rotated-admin-token-5e1f")).toBe(200);
    expect(await send(ADMIN_TOKEN, "a-rotated-admin-token-5e1f")).toBe(401);
  });
});
