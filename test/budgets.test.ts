import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { type Budget, dayKey, monthKey, resetsAt } from "../src/budgets";
import { api, createAgent, createTenantToken, type ErrorBody, expectInvalid, uniqueTenant } from "./support/http";
import { postRun, readEvents, runTurn, transcriptOf, type Run } from "./support/runs";
import { requestsOf, upstreamBase } from "./support/upstreams";
import { AgentryError } from "../client/index.ts";
import { testClient } from "./support/client";
import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { sessionStub } from "./support/held-d1";
import { callsReceived, gateTool, openGate } from "./support/tool-server";

/** $1 per token in and out: a call's cost is its total_tokens in dollars, exact. */
const DOLLAR_A_TOKEN = { input: 1_000_000, output: 1_000_000 };
const TOOL = [{ type: "builtin", name: "current_time" }];
const THREE_TOOLS = "[[tool current_time {}]] [[tool current_time {}]] [[tool current_time {}]] go";

async function createBudget(token: string, body: Record<string, unknown>): Promise<Budget> {
  const response = await api("/v1/budgets", { body }, token);
  if (response.status !== 201) throw new Error(`POST /v1/budgets: ${response.status} ${await response.text()}`);
  return response.json<Budget>();
}

async function budget(token: string, id: string): Promise<Budget> {
  const response = await api(`/v1/budgets/${id}`, {}, token);
  if (response.status !== 200) throw new Error(`GET /v1/budgets/${id}: ${response.status} ${await response.text()}`);
  return response.json<Budget>();
}

const patchBudget = (token: string, id: string, body: Record<string, unknown>) =>
  api(`/v1/budgets/${id}`, { method: "PATCH", body }, token);
const continueRun = (token: string, agentId: string, runId: string, body: Record<string, unknown> = {}) =>
  api(`/v1/agents/${agentId}/runs/${runId}/continue`, { body }, token);

const nextMidnight = () => {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)).toISOString();
};

/** The session object's spend gate can no longer reach the tenant's ledger (its instance keeps the broken binding until it dies). */
const ledgerDownIn = (sessionId: string, tenant: string) =>
  runInDurableObject(sessionStub(sessionId, tenant), (instance) => {
    const gate = (instance as unknown as { core: { spend: { env: Record<string, unknown> } } }).core.spend;
    const broken = { idFromName: () => ({}), get: () => ({ settle: () => Promise.reject(new Error("ledger down")) }) };
    gate.env = { ...gate.env, LEDGER: broken };
  });

async function expectSpent(response: Response, budgetId: string, resetsAt: string | null): Promise<void> {
  expect(response.status).toBe(429);
  const { error } = await response.json<ErrorBody>();
  expect(error).toMatchObject({ type: "budget_exceeded", details: { budget_id: budgetId, resets_at: resetsAt } });
  if (resetsAt === null) expect(response.headers.get("retry-after")).toBeNull();
  else expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
}

describe("budgets: periods", () => {
  it("are UTC days and months, reset at the next midnight or the first of the next month; total never resets", () => {
    const at = Date.parse("2026-12-31T23:59:59.500Z");
    expect([dayKey(at), monthKey(at)]).toEqual(["2026-12-31", "2026-12"]);
    expect(resetsAt("day", at)).toBe("2027-01-01T00:00:00.000Z");
    expect(resetsAt("month", at)).toBe("2027-01-01T00:00:00.000Z");
    expect(resetsAt("month", Date.parse("2028-02-29T12:00:00Z"))).toBe("2028-03-01T00:00:00.000Z");
    expect(resetsAt("day", Date.parse("2026-03-01T00:00:00Z"))).toBe("2026-03-02T00:00:00.000Z");
    expect(resetsAt("total", at)).toBeNull();
  });

  it("counts a call in its own UTC day and month: yesterday's use is not today's", async () => {
    const tenant = uniqueTenant();
    const token = await createTenantToken(tenant);
    const agent = await createAgent({}, token);
    const day = await createBudget(token, { scope: "agent", scope_id: agent.id, period: "day", max_tokens: 1000 });
    const month = await createBudget(token, { scope: "agent", scope_id: agent.id, period: "month", max_tokens: 10_000 });
    const now = Date.now();
    const yesterday = now - 86_400_000;
    const call = (at: number, tokens: number) => ({ agent_id: agent.id, session_id: null, cost_usd: 0, tokens, at });
    const ledger = env.LEDGER.get(env.LEDGER.idFromName(tenant));
    const verdict = await ledger.settle([call(yesterday, 700), call(now, 5)], { agent_id: agent.id, session_id: null });
    expect(verdict).toEqual({ ok: true, watched: true });
    expect(await budget(token, day.id)).toMatchObject({ used_tokens: 5 });
    const sameMonth = monthKey(yesterday) === monthKey(now);
    expect(await budget(token, month.id)).toMatchObject({ used_tokens: sameMonth ? 705 : 5 });
    // Today's 996 more spend the day budget: the next check refuses, naming it.
    const spent = await ledger.settle([call(now, 995)], { agent_id: agent.id, session_id: null });
    expect(spent).toMatchObject({ ok: false, budget_id: day.id, resets_at: nextMidnight() });
  });
});

describe("budgets: the API", () => {
  it("creates, reads, lists, changes and deletes a budget", async () => {
    const token = await createTenantToken();
    const created = await createBudget(token, { scope: "tenant", period: "day", max_tokens: 1000 });
    expect(created).toMatchObject({
      scope: "tenant",
      scope_id: null,
      period: "day",
      max_cost_usd: null,
      max_tokens: 1000,
      used_cost_usd: 0,
      used_tokens: 0,
      resets_at: nextMidnight(),
    });
    expect(created.id).toMatch(/^bdg_/);
    const agent = await createAgent({}, token);
    const monthly = await createBudget(token, { scope: "agent", scope_id: agent.id, period: "month", max_cost_usd: 5 });
    expect(Date.parse(monthly.resets_at ?? "")).toBeGreaterThan(Date.now());
    expect(new Date(monthly.resets_at ?? "").getUTCDate()).toBe(1);

    const list = await (await api("/v1/budgets?limit=1", {}, token)).json<{ data: Budget[]; next_cursor: string | null }>();
    expect(list.data.map((b) => b.id)).toEqual([monthly.id]);
    const rest = await (await api(`/v1/budgets?cursor=${list.next_cursor}`, {}, token)).json<{ data: Budget[]; next_cursor: null }>();
    expect(rest).toEqual({ data: [expect.objectContaining({ id: created.id })], next_cursor: null });

    const patched = await patchBudget(token, created.id, { max_cost_usd: 2, max_tokens: null });
    expect(patched.status).toBe(200);
    expect(await patched.json()).toMatchObject({ id: created.id, max_cost_usd: 2, max_tokens: null });
    expect(await budget(token, created.id)).toMatchObject({ max_cost_usd: 2, max_tokens: null });

    expect((await api(`/v1/budgets/${created.id}`, { method: "DELETE" }, token)).status).toBe(204);
    expect((await api(`/v1/budgets/${created.id}`, {}, token)).status).toBe(404);
    expect((await api(`/v1/budgets/${created.id}`, { method: "DELETE" }, token)).status).toBe(404);
  });

  it("has typed client helpers, and the client throws a spent budget's 429 as an AgentryError", async () => {
    const token = await createTenantToken();
    const client = testClient({ token });
    const agent = await client.createAgent({ name: "budgeted", provider: "mock", model: "mock-1" });
    const created = await client.createBudget({ scope: "agent", scope_id: agent.id, period: "total", max_tokens: 1 });
    expect(await client.getBudget(created.id)).toMatchObject({ id: created.id, used_tokens: 0 });
    await client.run(agent.id, { input: "spend" });
    const error = await client.run(agent.id, { input: "refused" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentryError);
    expect(error).toMatchObject({ status: 429, type: "budget_exceeded", details: { budget_id: created.id, resets_at: null } });
    expect((await client.updateBudget(created.id, { max_tokens: 100_000 })).max_tokens).toBe(100_000);
    expect((await client.run(agent.id, { input: "allowed" })).status).toBe("completed");
    expect((await client.listBudgets({ limit: 5 })).data.map((b) => b.id)).toEqual([created.id]);
    await client.deleteBudget(created.id);
    expect((await client.listBudgets()).data).toEqual([]);
  });

  it("refuses invalid budgets with a 400 naming the field, and unknown scopes with 404; nothing is stored", async () => {
    const token = await createTenantToken();
    const agent = await createAgent({}, token);
    const post = (body: unknown) => api("/v1/budgets", { body }, token);
    await expectInvalid(await post({ scope: "tenant", period: "day" }), "max_cost_usd", /max_tokens/);
    await expectInvalid(await post({ scope: "tenant", period: "day", max_cost_usd: null, max_tokens: null }), "max_cost_usd");
    await expectInvalid(await post({ scope: "tenant", scope_id: agent.id, period: "day", max_tokens: 1 }), "scope_id", /no scope_id/);
    await expectInvalid(await post({ scope: "agent", period: "day", max_tokens: 1 }), "scope_id", /required/);
    await expectInvalid(await post({ scope: "session", period: "day", max_tokens: 1 }), "scope_id");
    await expectInvalid(await post({ scope: "team", period: "day", max_tokens: 1 }), "scope");
    await expectInvalid(await post({ scope: "tenant", period: "week", max_tokens: 1 }), "period");
    await expectInvalid(await post({ scope: "tenant", period: "day", max_tokens: -1 }), "max_tokens");
    await expectInvalid(await post({ scope: "tenant", period: "day", max_tokens: 1.5 }), "max_tokens");
    await expectInvalid(await post({ scope: "tenant", period: "day", max_cost_usd: "1" }), "max_cost_usd");
    await expectInvalid(await post({ scope: "tenant", period: "day", max_tokens: 1, owner: "x" }), "owner", /unknown field/);
    await expectInvalid(await post({ scope: "agent", scope_id: "a/b", period: "day", max_tokens: 1 }), "scope_id");
    expect((await post({ scope: "agent", scope_id: "nobody", period: "day", max_tokens: 1 })).status).toBe(404);
    expect((await post({ scope: "session", scope_id: "ses_nothing", period: "day", max_tokens: 1 })).status).toBe(404);

    const kept = await createBudget(token, { scope: "tenant", period: "total", max_tokens: 5 });
    await expectInvalid(await patchBudget(token, kept.id, { max_tokens: null }), "max_cost_usd", /keeps/);
    await expectInvalid(await patchBudget(token, kept.id, { period: "day" }), "period", /unknown field/);
    await expectInvalid(await patchBudget(token, kept.id, { max_tokens: -3 }), "max_tokens");
    expect(await budget(token, kept.id)).toMatchObject({ period: "total", max_tokens: 5 });
    const list = await (await api("/v1/budgets", {}, token)).json<{ data: Budget[] }>();
    expect(list.data.map((b) => b.id)).toEqual([kept.id]);
  });

  it("keeps each tenant's budgets its own: another tenant's agent, session and budget are 404", async () => {
    const owner = await createTenantToken();
    const other = await createTenantToken();
    const agent = await createAgent({}, owner);
    const sessionId = `budget-iso-${crypto.randomUUID()}`;
    await runTurn(agent.id, { input: "hello", session_id: sessionId }, owner);
    const mine = await createBudget(owner, { scope: "session", scope_id: sessionId, period: "total", max_tokens: 10_000 });
    expect((await api(`/v1/budgets/${mine.id}`, {}, other)).status).toBe(404);
    expect((await patchBudget(other, mine.id, { max_tokens: 1 })).status).toBe(404);
    expect((await api(`/v1/budgets/${mine.id}`, { method: "DELETE" }, other)).status).toBe(404);
    expect((await (await api("/v1/budgets", {}, other)).json<{ data: Budget[] }>()).data).toEqual([]);
    const foreign = { period: "day", max_tokens: 1 };
    expect((await api("/v1/budgets", { body: { scope: "agent", scope_id: agent.id, ...foreign } }, other)).status).toBe(404);
    expect((await api("/v1/budgets", { body: { scope: "session", scope_id: sessionId, ...foreign } }, other)).status).toBe(404);
    expect(await budget(owner, mine.id)).toMatchObject({ max_tokens: 10_000 });
  });
});

describe("budgets: enforcement", () => {
  it("refuses a turn on a spent budget with 429 before any model call: runs, continue and /v1/responses", async () => {
    const token = await createTenantToken();
    const bucket = `budget-429-${crypto.randomUUID()}`;
    const agent = await createAgent({ provider: "anthropic", base_url: upstreamBase(env.GATEWAY_URL, bucket, "anthropic") }, token);
    const limit = await createBudget(token, { scope: "agent", scope_id: agent.id, period: "day", max_tokens: 1 });
    const sessionId = `budget-429-${crypto.randomUUID()}`;
    // Under its limit, the turn runs (and passes it: a call's use is known only once it answered).
    const first = await runTurn(agent.id, { input: "hello", session_id: sessionId }, token);
    expect(first.status).toBe("completed");
    expect(await budget(token, limit.id)).toMatchObject({ used_tokens: first.metrics.total_tokens });
    expect(await requestsOf(env.GATEWAY_URL, bucket)).toHaveLength(1);

    await expectSpent(await postRun(agent.id, { input: "again", session_id: sessionId }, token), limit.id, nextMidnight());
    await expectSpent(await postRun(agent.id, { input: "new session" }, token), limit.id, nextMidnight());
    await expectSpent(await postRun(agent.id, { input: "later", background: true }, token), limit.id, nextMidnight());
    for (const on_busy of ["enqueue", "steer"]) {
      await expectSpent(await postRun(agent.id, { input: "behind", session_id: sessionId, on_busy }, token), limit.id, nextMidnight());
    }
    // With an Idempotency-Key the session object checks (a retry of a run it made would be answered that run).
    const keyed = await api(
      `/v1/agents/${agent.id}/runs`,
      { body: { input: "keyed" }, headers: { "idempotency-key": crypto.randomUUID() } },
      token,
    );
    await expectSpent(keyed, limit.id, nextMidnight());
    await expectSpent(await continueRun(token, agent.id, first.id, { input: "more" }), limit.id, nextMidnight());
    const responses = await api("/v1/responses", { body: { model: agent.id, input: "hi" } }, token);
    expect(responses.status).toBe(429);
    expect(responses.headers.get("x-should-retry")).toBe("false");
    expect(await responses.json()).toMatchObject({ error: { code: "budget_exceeded" } });
    // No model call was made and no run was stored.
    expect(await requestsOf(env.GATEWAY_URL, bucket)).toHaveLength(1);
    const session = await (await api(`/v1/sessions/${sessionId}`, {}, token)).json<{ run_count: number }>();
    expect(session.run_count).toBe(1);

    // Raised, the same turn runs.
    expect((await patchBudget(token, limit.id, { max_tokens: 1_000_000 })).status).toBe(200);
    expect((await runTurn(agent.id, { input: "again", session_id: sessionId }, token)).status).toBe("completed");
  });

  it("stops a run that reaches its budget after the step's tools ran, keeps its work, and continues it once raised", async () => {
    const token = await createTenantToken();
    const agent = await createAgent({ tools: TOOL }, token);
    const limit = await createBudget(token, { scope: "tenant", period: "total", max_tokens: 1 });
    const stopped = await runTurn(agent.id, { input: THREE_TOOLS }, token);
    expect(stopped).toMatchObject({ status: "error", error: { type: "budget_exceeded", retryable: false } });
    expect(stopped.error?.message).toContain(limit.id);
    // The first answer's tool call ran and was recorded; no second model call was made.
    expect(stopped.metrics).toMatchObject({ model_calls: 1, tool_calls: 1 });
    const kept = await transcriptOf(stopped.session_id, token);
    expect(kept.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    const events = await (await api(`/v1/agents/${agent.id}/runs/${stopped.id}/events`, {}, token)).json<{ data: { type: string }[] }>();
    expect(events.data.filter((e) => e.type === "model_request_started")).toHaveLength(1);
    expect(events.data.map((e) => e.type)).toContain("tool_call_completed");
    expect(events.data.at(-1)?.type).toBe("run_error");

    // Still spent: the continue is refused. A total budget never resets: no Retry-After.
    await expectSpent(await continueRun(token, agent.id, stopped.id), limit.id, null);
    expect((await patchBudget(token, limit.id, { max_tokens: 1_000_000 })).status).toBe(200);
    const resumed = await continueRun(token, agent.id, stopped.id);
    expect(resumed.status).toBe(200);
    const run = await resumed.json<Run>();
    expect(run).toMatchObject({ status: "completed", parent_run_id: stopped.id });
    expect(String(run.output).match(/current_time returned/g)).toHaveLength(3);
    expect(run.metrics).toMatchObject({ model_calls: 3, tool_calls: 2 });
    const used = await budget(token, limit.id);
    expect(used.used_tokens).toBe(stopped.metrics.total_tokens + run.metrics.total_tokens);
  });

  it("counts a day's use from before the budget existed; a total budget from its creation; GET /v1/usage shows both", async () => {
    const token = await createTenantToken();
    const agent = await createAgent({ prices: DOLLAR_A_TOKEN }, token);
    const before = await runTurn(agent.id, { input: "before any budget" }, token);
    const day = await createBudget(token, { scope: "tenant", period: "day", max_cost_usd: 1_000_000 });
    const total = await createBudget(token, { scope: "agent", scope_id: agent.id, period: "total", max_tokens: 1_000_000 });
    expect(day).toMatchObject({ used_tokens: before.metrics.total_tokens, used_cost_usd: before.metrics.cost_usd });
    expect(total).toMatchObject({ used_tokens: 0, used_cost_usd: 0, resets_at: null });
    const after = await runTurn(agent.id, { input: "after both" }, token);
    expect(await budget(token, day.id)).toMatchObject({
      used_tokens: before.metrics.total_tokens + after.metrics.total_tokens,
      used_cost_usd: (before.metrics.cost_usd ?? 0) + (after.metrics.cost_usd ?? 0),
    });
    expect(await budget(token, total.id)).toMatchObject({ used_tokens: after.metrics.total_tokens, used_cost_usd: after.metrics.cost_usd });
    const usage = await (await api("/v1/usage", {}, token)).json<{ data: unknown[]; budgets: Budget[] }>();
    expect(usage.data).toEqual(expect.any(Array));
    expect(usage.budgets.map((b) => [b.id, b.used_tokens])).toEqual([
      [total.id, after.metrics.total_tokens],
      [day.id, before.metrics.total_tokens + after.metrics.total_tokens],
    ]);
  });

  it("counts structured-output repairs, compaction summaries and on-demand compaction", async () => {
    const token = await createTenantToken();
    const schema = { type: "object", properties: { name: { type: "string" } }, required: ["name"], additionalProperties: false };
    const repairing = await createAgent({ output_schema: schema, prices: DOLLAR_A_TOKEN }, token);
    const repairs = await createBudget(token, { scope: "agent", scope_id: repairing.id, period: "total", max_tokens: 1_000_000 });
    const repaired = await runTurn(repairing.id, { input: "[[badjson]] who?" }, token);
    expect(repaired).toMatchObject({ status: "completed", metrics: { model_calls: 2 } });
    expect(await budget(token, repairs.id)).toMatchObject({
      used_tokens: repaired.metrics.total_tokens,
      used_cost_usd: repaired.metrics.cost_usd,
    });

    const compacting = await createAgent(
      { prices: DOLLAR_A_TOKEN, compaction: { enabled: true, trigger_tokens: 1000, keep_last_messages: 2 } },
      token,
    );
    const sessionId = `budget-compact-${crypto.randomUUID()}`;
    const runs = [
      await runTurn(compacting.id, { input: "[[words 400]] one", session_id: sessionId }, token),
      await runTurn(compacting.id, { input: "[[words 400]] two", session_id: sessionId }, token),
    ];
    const session = await createBudget(token, { scope: "session", scope_id: sessionId, period: "day", max_tokens: 1_000_000 });
    const events = await readEvents(await postRun(compacting.id, { input: "three", session_id: sessionId, stream: true }, token));
    expect(events.map((e) => e.type)).toContain("compaction");
    const third = events.at(-1)?.data.metrics as Run["metrics"];
    // The summary's tokens and cost are the run's (one model call plus the summary), and the budget's.
    const answer = events.find((e) => e.type === "model_request_completed")?.data as {
      usage: { input_tokens: number; output_tokens: number };
    };
    expect(third.total_tokens).toBeGreaterThan(answer.usage.input_tokens + answer.usage.output_tokens);
    expect(third.cost_usd).toBe(third.total_tokens);
    const counted = runs.reduce((n, r) => n + r.metrics.total_tokens, 0) + third.total_tokens;
    expect(await budget(token, session.id)).toMatchObject({ used_tokens: counted, used_cost_usd: counted });

    const compact = await api(`/v1/sessions/${sessionId}/compact`, { method: "POST" }, token);
    expect(compact.status).toBe(200);
    expect((await budget(token, session.id)).used_tokens).toBeGreaterThan(counted);
    // A spent budget refuses the on-demand summary too.
    expect((await patchBudget(token, session.id, { max_tokens: 1 })).status).toBe(200);
    await expectSpent(await api(`/v1/sessions/${sessionId}/compact`, { method: "POST" }, token), session.id, nextMidnight());
  });

  it("makes no model call for a watched agent while the ledger cannot be reached; an unwatched agent's calls go on", async () => {
    const tenant = uniqueTenant();
    const token = await createTenantToken(tenant);
    const bucket = `ledger-down-${crypto.randomUUID()}`;
    const base = upstreamBase(env.GATEWAY_URL, bucket, "anthropic");
    const watched = await createAgent({ provider: "anthropic", base_url: base, tools: TOOL }, token);
    const free = await createAgent({ provider: "anthropic", base_url: base, tools: TOOL }, token);
    await createBudget(token, { scope: "agent", scope_id: watched.id, period: "total", max_tokens: 1_000_000 });
    for (const agent of [watched, free]) {
      const sessionId = `ledger-down-${crypto.randomUUID()}`;
      expect((await runTurn(agent.id, { input: "hello", session_id: sessionId }, token)).status).toBe("completed");
      await ledgerDownIn(sessionId, tenant);
      const before = (await requestsOf(env.GATEWAY_URL, bucket)).length;
      const run = await runTurn(agent.id, { input: "[[tool current_time {}]] go", session_id: sessionId }, token);
      const calls = (await requestsOf(env.GATEWAY_URL, bucket)).length - before;
      if (agent === watched) {
        // The turn's first call was allowed by the Worker's check; the next one waits for the ledger, past the run's retries (0).
        expect(run).toMatchObject({ status: "error", error: { type: "internal", retryable: true }, metrics: { model_calls: 1 } });
        expect(run.error?.message).toContain("spend ledger could not be reached");
        expect(calls).toBe(1);
      } else {
        expect(run).toMatchObject({ status: "completed", metrics: { model_calls: 2 } });
        expect(calls).toBe(2);
      }
    }
  });

  it("makes no model call in an object that has not heard from the ledger since it started, while the ledger cannot be reached", async () => {
    const tenant = uniqueTenant();
    const token = await createTenantToken(tenant);
    const bucket = `ledger-never-${crypto.randomUUID()}`;
    // No budget at all: the object cannot know that, having never had the ledger's answer.
    const agent = await createAgent({ provider: "anthropic", base_url: upstreamBase(env.GATEWAY_URL, bucket, "anthropic") }, token);
    const sessionId = `ledger-never-${crypto.randomUUID()}`;
    await ledgerDownIn(sessionId, tenant);
    // With an Idempotency-Key the Worker leaves the budget check to the session (its retry may be a run already made).
    const response = await api(
      `/v1/agents/${agent.id}/runs`,
      { body: { input: "hello", session_id: sessionId }, headers: { "idempotency-key": crypto.randomUUID() } },
      token,
    );
    expect(response.status).toBe(200);
    const run = await response.json<Run>();
    expect(run).toMatchObject({ status: "error", error: { type: "internal", retryable: true }, metrics: { model_calls: 0 } });
    expect(run.error?.message).toContain("spend ledger could not be reached");
    expect(await requestsOf(env.GATEWAY_URL, bucket)).toHaveLength(0);
  });

  it("counts a call whose report the ledger never answered before the object crashed: the stored report is sent again, and counted once", async () => {
    const tenant = uniqueTenant();
    const token = await createTenantToken(tenant);
    const bucket = crypto.randomUUID();
    const agent = await createAgent({ tools: [gateTool(bucket)], prices: DOLLAR_A_TOKEN }, token);
    const limit = await createBudget(token, { scope: "agent", scope_id: agent.id, period: "total", max_tokens: 1_000_000 });
    const sessionId = `report-lost-${crypto.randomUUID()}`;
    const first = await runTurn(agent.id, { input: "hello", session_id: sessionId }, token);
    expect((await budget(token, limit.id)).used_tokens).toBe(first.metrics.total_tokens);
    // The object's ledger goes away: the next call's report is refused, and the object dies holding it.
    await ledgerDownIn(sessionId, tenant);
    const started = await (await postRun(agent.id, { input: "[[tool wait {}]] go", session_id: sessionId, background: true }, token)).json<{
      run_id: string;
    }>();
    await callsReceived(bucket, 1);
    expect((await budget(token, limit.id)).used_tokens).toBe(first.metrics.total_tokens);
    await abortAllDurableObjects();
    await openGate(bucket);
    const second = await (await api(`/v1/agents/${agent.id}/runs/${started.run_id}?wait=20`, {}, token)).json<Run>();
    expect(second).toMatchObject({ status: "completed", metrics: { model_calls: 2 } });
    // Both calls of the second run are counted, each once, beside the first run's.
    const total = first.metrics.total_tokens + second.metrics.total_tokens;
    await vi.waitFor(async () => expect((await budget(token, limit.id)).used_tokens).toBe(total));
    // A later wake of the object sends nothing twice.
    await abortAllDurableObjects();
    expect((await runTurn(agent.id, { input: "again", session_id: sessionId }, token)).status).toBe("completed");
    const session = await (await api(`/v1/sessions/${sessionId}`, {}, token)).json<{ metrics: { total_tokens: number } }>();
    expect((await budget(token, limit.id)).used_tokens).toBe(session.metrics.total_tokens);
  });

  it("counts the calls of a run resumed after its object crashed", async () => {
    const token = await createTenantToken();
    const bucket = crypto.randomUUID();
    const agent = await createAgent({ tools: [gateTool(bucket)], prices: DOLLAR_A_TOKEN }, token);
    const limit = await createBudget(token, { scope: "agent", scope_id: agent.id, period: "total", max_tokens: 1_000_000 });
    const started = await (await postRun(agent.id, { input: "[[tool wait {}]] go", background: true }, token)).json<{ run_id: string }>();
    // The run is inside its tool call and its first model call is counted (the report is sent as the call answers); then every object dies.
    await callsReceived(bucket, 1);
    await vi.waitFor(async () => expect((await budget(token, limit.id)).used_tokens).toBeGreaterThan(0));
    await abortAllDurableObjects();
    await openGate(bucket);
    const run = await (await api(`/v1/agents/${agent.id}/runs/${started.run_id}?wait=20`, {}, token)).json<Run>();
    expect(run).toMatchObject({ status: "completed", metrics: { model_calls: 2 } });
    // The resumed run's answer is counted too: the ledger holds both calls, as the run's metrics do.
    expect(await budget(token, limit.id)).toMatchObject({ used_tokens: run.metrics.total_tokens, used_cost_usd: run.metrics.cost_usd });
  });

  it("bounds the overshoot of parallel runs: at most one model call per run in flight past the cap", async () => {
    const token = await createTenantToken();
    const agent = await createAgent({ tools: TOOL, prices: DOLLAR_A_TOKEN }, token);
    const runs = 6;
    const steps = "[[tool current_time {}]] ".repeat(8);
    // About two runs' worth of spend: every run starts, the cap is reached while they are all in flight.
    const cap = 2 * 8 * 300;
    const limit = await createBudget(token, { scope: "tenant", period: "total", max_cost_usd: cap });
    const answers = await Promise.all(
      Array.from({ length: runs }, (_, i) => postRun(agent.id, { input: `${steps} run ${i}`, stream: true }, token)),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(runs).fill(200));
    const streams = await Promise.all(answers.map(readEvents));
    const costs = streams.flatMap((events) =>
      events.filter((e) => e.type === "model_request_completed").map((e) => (e.data as { cost_usd: number }).cost_usd),
    );
    const largest = Math.max(...costs);
    const spent = costs.reduce((a, b) => a + b, 0);
    const used = await budget(token, limit.id);
    // The ledger counted every call, and stopped the runs past the cap within the bound.
    expect(used.used_cost_usd).toBeCloseTo(spent, 6);
    expect(used.used_cost_usd).toBeGreaterThanOrEqual(cap);
    expect(used.used_cost_usd).toBeLessThanOrEqual(cap + runs * largest);
    const stops = streams.map((events) => events.at(-1)).filter((e) => e?.type === "run_error");
    expect(stops.map((e) => (e?.data.error as { type?: string } | undefined)?.type)).toContain("budget_exceeded");
  });
});
