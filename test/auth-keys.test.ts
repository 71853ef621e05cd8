import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { hashToken } from "../src/api/auth";
import { api, createTenantToken, uniqueTenant } from "./support/http";

type Key = { id: string; key?: string; tenant: string; name: string; created_at: string };
type Page<T> = { data: T[]; next_cursor: string | null };
type ErrorBody = { error: { type: string; message: string; details: { fields?: { path: string; message: string }[] } } };

async function createKey(tenant: string, name: string): Promise<Key & { key: string }> {
  const response = await api("/v1/keys", { body: { tenant, name } });
  expect(response.status).toBe(201);
  return response.json<Key & { key: string }>();
}

async function keysOf(tenant: string): Promise<Key[]> {
  const response = await api(`/v1/keys?tenant=${tenant}&limit=100`);
  expect(response.status).toBe(200);
  return (await response.json<Page<Key>>()).data;
}

describe("authentication", () => {
  it("answers 401 unauthorized without a token, with a wrong one, or with another scheme", async () => {
    for (const response of [
      await api("/v1/agents", {}, null),
      await api("/v1/agents", {}, "agk_not-a-key"),
      await api("/v1/agents", { headers: { authorization: "Basic dGVzdDp0ZXN0" } }, null),
    ]) {
      expect(response.status).toBe(401);
      expect((await response.json<ErrorBody>()).error.type).toBe("unauthorized");
    }
  });

  it("accepts a tenant key as a bearer token", async () => {
    const token = await createTenantToken();
    expect((await api("/v1/agents", {}, token)).status).toBe(200);
  });
});

describe("POST /v1/keys", () => {
  it("creates a key shown once and stores only its hash", async () => {
    const tenant = uniqueTenant("acme");
    const created = await createKey(tenant, "ci");
    expect(created).toEqual({
      id: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^agk_[A-Za-z0-9_-]{43}$/),
      tenant,
      name: "ci",
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    const row = await env.DB.prepare("SELECT * FROM api_keys WHERE id = ?").bind(created.id).first<Record<string, unknown>>();
    expect(row?.key_hash).toBe(await hashToken(created.key));
    expect(Object.values(row ?? {})).not.toContain(created.key);
  });

  it("answers 409 already_exists for a name the tenant already has, not for another tenant", async () => {
    const tenant = uniqueTenant();
    await createKey(tenant, "ci");
    const again = await api("/v1/keys", { body: { tenant, name: "ci" } });
    expect(again.status).toBe(409);
    expect((await again.json<ErrorBody>()).error.type).toBe("already_exists");
    expect(await keysOf(tenant)).toHaveLength(1);
    await createKey(uniqueTenant(), "ci");
  });

  it("rejects bad input with 400 naming the field, and stores nothing", async () => {
    const tenant = uniqueTenant();
    const cases: [unknown, string][] = [
      [{ tenant: "bad/tenant", name: "x" }, "tenant"],
      [{ tenant: "-leading-dash", name: "x" }, "tenant"],
      [{ tenant: "", name: "x" }, "tenant"],
      [{ tenant: "a".repeat(129), name: "x" }, "tenant"],
      [{ tenant, name: "" }, "name"],
      [{ tenant }, "name"],
      [{ tenant, name: "x", scope: "all" }, "scope"],
      [{ tenant, name: 7 }, "name"],
    ];
    for (const [body, path] of cases) {
      const response = await api("/v1/keys", { body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      const error = (await response.json<ErrorBody>()).error;
      expect(error.type).toBe("invalid_request");
      expect(error.details.fields?.map((f) => f.path)).toContain(path);
    }
    const malformed = await api("/v1/keys", { body: "{not json" });
    expect(malformed.status).toBe(400);
    expect((await malformed.json<ErrorBody>()).error.type).toBe("invalid_request");
    expect(await keysOf(tenant)).toHaveLength(0);
  });
});

describe("admin only", () => {
  it("answers 403 forbidden to a tenant token on every key route, before validating", async () => {
    const tenant = uniqueTenant();
    const token = await createTenantToken(tenant);
    const { id } = await createKey(tenant, "other");
    for (const response of [
      await api("/v1/keys", { body: { tenant, name: "mine" } }, token),
      await api("/v1/keys", { body: { nonsense: true } }, token),
      await api("/v1/keys", {}, token),
      await api(`/v1/keys/${id}`, { method: "DELETE" }, token),
    ]) {
      expect(response.status).toBe(403);
      expect((await response.json<ErrorBody>()).error.type).toBe("forbidden");
    }
    expect((await keysOf(tenant)).map((k) => k.name).sort()).toEqual(["other", "test"]);
  });
});

describe("GET /v1/keys", () => {
  it("lists keys newest first, page by page, without the key or its hash", async () => {
    const tenant = uniqueTenant();
    const names = ["k1", "k2", "k3", "k4", "k5"];
    const created: Key[] = [];
    for (const name of names) created.push(await createKey(tenant, name));
    // Newest first; keys of the same millisecond by id, descending.
    const expected = created.sort((a, b) => (`${b.created_at} ${b.id}` < `${a.created_at} ${a.id}` ? -1 : 1)).map((k) => k.name);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = `/v1/keys?tenant=${tenant}&limit=2${cursor ? `&cursor=${cursor}` : ""}`;
      const response = await api(query);
      expect(response.status).toBe(200);
      const body: Page<Record<string, unknown>> = await response.json();
      expect(body.data.length).toBeLessThanOrEqual(2);
      for (const key of body.data) {
        expect(Object.keys(key).sort()).toEqual(["created_at", "id", "name", "tenant"]);
        seen.push(String(key.name));
      }
      cursor = body.next_cursor;
      pages++;
    } while (cursor !== null && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toEqual(expected);
  });

  it("lists every tenant's keys without a filter", async () => {
    const [a, b] = [uniqueTenant(), uniqueTenant()];
    await createKey(a, "x");
    await createKey(b, "x");
    const body = await (await api("/v1/keys?limit=100")).json<Page<Key>>();
    const tenants = body.data.map((k) => k.tenant);
    expect(tenants).toContain(a);
    expect(tenants).toContain(b);
  });

  it("answers 400 for a bad limit or cursor", async () => {
    for (const query of ["limit=0", "limit=101", "limit=abc", "cursor=%%%"]) {
      expect((await api(`/v1/keys?${query}`)).status, query).toBe(400);
    }
  });
});

describe("DELETE /v1/keys/{id}", () => {
  it("deletes a key, which stops authenticating at once", async () => {
    const tenant = uniqueTenant();
    const { id, key } = await createKey(tenant, "temp");
    expect((await api("/v1/agents", {}, key)).status).toBe(200);
    const deleted = await api(`/v1/keys/${id}`, { method: "DELETE" });
    expect(deleted.status).toBe(204);
    expect(await deleted.text()).toBe("");
    expect((await api("/v1/agents", {}, key)).status).toBe(401);
    expect(await keysOf(tenant)).toHaveLength(0);
    await createKey(tenant, "temp");
  });

  it("answers 404 not_found for an unknown or already deleted key", async () => {
    const { id } = await createKey(uniqueTenant(), "once");
    expect((await api(`/v1/keys/${id}`, { method: "DELETE" })).status).toBe(204);
    for (const target of [id, "key_unknown"]) {
      const response = await api(`/v1/keys/${target}`, { method: "DELETE" });
      expect(response.status).toBe(404);
      expect((await response.json<ErrorBody>()).error.type).toBe("not_found");
    }
  });
});
