import { describe, expect, it } from "vitest";
import { api, createAgent, createTenantToken, uniqueTenant } from "./support/http";
import type { Run } from "./support/runs";

const withKey = (key: string) => ({ "idempotency-key": key });

describe("Idempotency-Key", () => {
  it("gives a retried blocking run the same run, not a second one or a 409", async () => {
    const agent = await createAgent();
    const key = crypto.randomUUID();
    const body = { input: "once only" };
    const first = await api(`/v1/agents/${agent.id}/runs`, { body, headers: withKey(key) });
    const second = await api(`/v1/agents/${agent.id}/runs`, { body, headers: withKey(key) });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    const [a, b] = [await first.json<Run>(), await second.json<Run>()];
    expect(b.id).toBe(a.id);
    expect(b.session_id).toBe(a.session_id);
    const runs = await (await api(`/v1/agents/${agent.id}/runs`)).json<{ data: Run[] }>();
    expect(runs.data.map((r) => r.id)).toEqual([a.id]);
  });

  it("answers concurrent retries of one POST with one run", async () => {
    const agent = await createAgent();
    const key = crypto.randomUUID();
    const body = { input: "[[slow 200]] racing", session_id: `idem-${crypto.randomUUID()}` };
    const answers = await Promise.all([0, 1, 2].map(() => api(`/v1/agents/${agent.id}/runs`, { body, headers: withKey(key) })));
    const ok = answers.filter((r) => r.status === 200);
    const ids = new Set(await Promise.all(ok.map(async (r) => (await r.json<Run>()).id)));
    expect(ids.size).toBe(1);
    const runs = await (await api(`/v1/agents/${agent.id}/runs?session_id=${body.session_id}`)).json<{ data: Run[] }>();
    expect(runs.data).toHaveLength(1);
  });

  it("refuses the same key with a different body: 409 idempotency_conflict, nothing stored", async () => {
    const agent = await createAgent();
    const key = crypto.randomUUID();
    const first = await api(`/v1/agents/${agent.id}/runs`, { body: { input: "one" }, headers: withKey(key) });
    expect(first.status).toBe(200);
    const other = await api(`/v1/agents/${agent.id}/runs`, { body: { input: "two" }, headers: withKey(key) });
    expect(other.status).toBe(409);
    expect((await other.json<{ error: { type: string } }>()).error.type).toBe("idempotency_conflict");
    const runs = await (await api(`/v1/agents/${agent.id}/runs`)).json<{ data: Run[] }>();
    expect(runs.data).toHaveLength(1);
  });

  it("returns the first agent again, and scopes keys per tenant", async () => {
    const key = crypto.randomUUID();
    const body = { provider: "mock", model: "mock-1", name: "idem" };
    const first = await api("/v1/agents", { body, headers: withKey(key) });
    const second = await api("/v1/agents", { body, headers: withKey(key) });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(await second.json()).toEqual(await first.json());
    const otherTenant = await createTenantToken();
    const theirs = await api("/v1/agents", { body, headers: withKey(key) }, otherTenant);
    expect(theirs.status).toBe(201);
  });

  it("returns the first key record again without showing its secret twice", async () => {
    const key = crypto.randomUUID();
    const body = { tenant: uniqueTenant(), name: "ci" };
    const first = await (await api("/v1/keys", { body, headers: withKey(key) })).json<{ id: string; key: string | null }>();
    const second = await api("/v1/keys", { body, headers: withKey(key) });
    expect(second.status).toBe(201);
    const replay = await second.json<{ id: string; key: string | null }>();
    expect(replay.id).toBe(first.id);
    expect(first.key).toMatch(/^agk_/);
    expect(replay.key).toBeNull();
  });

  it("lets a failed request's key be used again", async () => {
    const key = crypto.randomUUID();
    const bad = await api("/v1/agents", { body: { id: "dup-idem", provider: "mock", model: "m" } });
    expect(bad.status).toBe(201);
    const conflict = await api("/v1/agents", { body: { id: "dup-idem", provider: "mock", model: "m" }, headers: withKey(key) });
    expect(conflict.status).toBe(409);
    const again = await api("/v1/agents", { body: { id: "dup-idem", provider: "mock", model: "m" }, headers: withKey(key) });
    expect((await again.json<{ error: { type: string } }>()).error.type).toBe("already_exists");
  });

  it("answers a retried continue with the continued run", async () => {
    const agent = await createAgent({ tools: [{ type: "client", name: "ask", parameters: { type: "object", properties: {} } }] });
    const paused = await (await api(`/v1/agents/${agent.id}/runs`, { body: { input: "[[tool ask {}]]" } })).json<Run>();
    const body = { tool_results: [{ tool_call_id: paused.required_actions[0]!.tool_call_id, output: "yes" }] };
    const key = crypto.randomUUID();
    const first = await (await api(`/v1/agents/${agent.id}/runs/${paused.id}/continue`, { body, headers: withKey(key) })).json<Run>();
    const second = await api(`/v1/agents/${agent.id}/runs/${paused.id}/continue`, { body, headers: withKey(key) });
    expect(second.status).toBe(200);
    expect(await second.json()).toEqual(first);
    expect(first.status).toBe("completed");
  });
});
