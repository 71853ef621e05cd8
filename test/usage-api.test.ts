import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { UsageDay } from "../src/db/usage";
import { rollUpRecentUsage, rollUpUsage } from "../src/maintenance/usage-rollup";
import { emptyMetrics, type RunMetrics } from "../src/run-model/run-record";
import { api, createAgent, createTenantToken, uniqueTenant } from "./support/http";
import { runTurn, type Run } from "./support/runs";

type ErrorBody = { error: { type: string; details: { fields: { path: string }[] } } };

/**
 * Writes a run into the D1 mirror as the Session object does (src/session/store/mirror-statements.ts): a
 * fixture row with the metrics a priced run would have, since the offline model's runs are
 * not priced (mock-1 is not in the table).
 */
async function fixtureRun(tenant: string, agentId: string, createdAt: string, metrics: Partial<RunMetrics>): Promise<string> {
  const id = `run_${crypto.randomUUID()}`;
  const sessionId = `ses_${crypto.randomUUID()}`;
  const run: Run = {
    id,
    agent_id: agentId,
    session_id: sessionId,
    status: "completed",
    input: [{ type: "text", text: "hello" }],
    output: "You said: hello",
    error: null,
    required_actions: [],
    parent_run_id: null,
    forked_from_checkpoint: null,
    agent_version: 1,
    attempts: 1,
    metrics: { ...emptyMetrics(), model_calls: 1, ...metrics },
    metadata: {},
    created_at: createdAt,
    started_at: createdAt,
    finished_at: createdAt,
  };
  await env.DB.prepare(
    `INSERT INTO runs (id, tenant, session_id, agent_id, agent_version, status, body, created_at, updated_at)
     VALUES (?, ?, ?, ?, 1, 'completed', ?, ?, ?)`,
  )
    .bind(id, tenant, sessionId, agentId, JSON.stringify(run), createdAt, createdAt)
    .run();
  return id;
}

const tokens = (input: number, output: number, cacheRead = 0, cacheWrite = 0, cost: number | null = null): Partial<RunMetrics> => ({
  input_tokens: input,
  output_tokens: output,
  cache_read_tokens: cacheRead,
  cache_write_tokens: cacheWrite,
  total_tokens: input + output,
  cost_usd: cost,
});

async function usage(query: string, token: string): Promise<UsageDay[]> {
  const response = await api(`/v1/usage${query}`, {}, token);
  if (response.status !== 200) throw new Error(`GET /v1/usage${query}: ${response.status} ${await response.text()}`);
  return (await response.json<{ data: UsageDay[] }>()).data;
}

const day = (date: string, agentId: string, fields: Partial<UsageDay>): UsageDay => ({
  date,
  agent_id: agentId,
  runs: 0,
  input_tokens: 0,
  output_tokens: 0,
  cache_read_tokens: 0,
  cache_write_tokens: 0,
  cost_usd: null,
  ...fields,
});

const today = () => new Date().toISOString().slice(0, 10);
const shift = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

describe("the daily usage roll-up and GET /v1/usage", () => {
  it("sums a day's runs per agent: count, tokens, and the known costs", async () => {
    const tenant = uniqueTenant();
    const token = await createTenantToken(tenant);
    const date = "2025-03-14";
    await fixtureRun(tenant, "support", `${date}T00:00:00.000Z`, tokens(1_000, 200, 600, 100, 0.01));
    await fixtureRun(tenant, "support", `${date}T12:30:00.000Z`, tokens(3_000, 400, 0, 0, 0.02));
    await fixtureRun(tenant, "support", `${date}T23:59:59.999Z`, tokens(10, 5)); // unknown price
    await fixtureRun(tenant, "billing", `${date}T08:00:00.000Z`, tokens(50, 7)); // unknown price
    // Neighbouring days are not that day's.
    await fixtureRun(tenant, "support", "2025-03-13T23:59:59.999Z", tokens(1, 1, 0, 0, 5));
    await fixtureRun(tenant, "support", "2025-03-15T00:00:00.000Z", tokens(2, 2, 0, 0, 7));

    await rollUpUsage(env.DB, date);
    expect(await usage(`?from=${date}&to=${date}`, token)).toEqual([
      day(date, "billing", { runs: 1, input_tokens: 50, output_tokens: 7, cost_usd: null }),
      day(date, "support", {
        runs: 3,
        input_tokens: 4_010,
        output_tokens: 605,
        cache_read_tokens: 600,
        cache_write_tokens: 100,
        cost_usd: 0.03,
      }),
    ]);

    await rollUpUsage(env.DB, "2025-03-15");
    await rollUpUsage(env.DB, "2025-03-13");
    const rows = await usage("?from=2025-03-13&to=2025-03-15", token);
    expect(rows.map((r) => [r.date, r.agent_id, r.runs, r.cost_usd])).toEqual([
      ["2025-03-13", "support", 1, 5],
      ["2025-03-14", "billing", 1, null],
      ["2025-03-14", "support", 3, 0.03],
      ["2025-03-15", "support", 1, 7],
    ]);
    expect(await usage("?from=2025-03-13&to=2025-03-15&agent_id=billing", token)).toEqual([rows[1]]);
    expect(await usage("?from=2025-03-13&to=2025-03-15&agent_id=nobody", token)).toEqual([]);
  });

  it("is idempotent: recomputing replaces the day's rows with the runs' current totals", async () => {
    const tenant = uniqueTenant();
    const token = await createTenantToken(tenant);
    const date = "2025-04-01";
    const runId = await fixtureRun(tenant, "support", `${date}T10:00:00.000Z`, tokens(100, 10, 0, 0, 0.001));
    await fixtureRun(tenant, "support", `${date}T11:00:00.000Z`, tokens(200, 20, 0, 0, 0.002));

    await rollUpUsage(env.DB, date);
    const first = await usage(`?from=${date}&to=${date}`, token);
    await rollUpUsage(env.DB, date);
    expect(await usage(`?from=${date}&to=${date}`, token)).toEqual(first);
    expect(first).toEqual([day(date, "support", { runs: 2, input_tokens: 300, output_tokens: 30, cost_usd: 0.003 })]);
    const stored = await env.DB.prepare("SELECT COUNT(*) AS n FROM usage_daily WHERE tenant = ? AND date = ?")
      .bind(tenant, date)
      .first<{ n: number }>();
    expect(stored?.n).toBe(1);

    // The run went on after the first roll-up: the next one counts its new totals, once.
    const later = { ...emptyMetrics(), ...tokens(500, 50, 0, 0, 0.004) };
    await env.DB.prepare("UPDATE runs SET body = json_set(body, '$.metrics', json(?)) WHERE id = ?")
      .bind(JSON.stringify(later), runId)
      .run();
    await rollUpUsage(env.DB, date);
    expect(await usage(`?from=${date}&to=${date}`, token)).toEqual([
      day(date, "support", { runs: 2, input_tokens: 700, output_tokens: 70, cost_usd: 0.006 }),
    ]);
  });

  it("shows each tenant only its own rows, even for the same agent id", async () => {
    const [a, b] = [uniqueTenant("a"), uniqueTenant("b")];
    const [tokenA, tokenB, tokenC] = await Promise.all([createTenantToken(a), createTenantToken(b), createTenantToken()]);
    const date = "2025-05-05";
    await fixtureRun(a, "support", `${date}T09:00:00.000Z`, tokens(100, 10));
    await fixtureRun(b, "support", `${date}T09:00:00.000Z`, tokens(999, 99));
    await rollUpUsage(env.DB, date);

    expect(await usage(`?from=${date}&to=${date}`, tokenA)).toEqual([
      day(date, "support", { runs: 1, input_tokens: 100, output_tokens: 10 }),
    ]);
    expect(await usage(`?from=${date}&to=${date}`, tokenB)).toEqual([
      day(date, "support", { runs: 1, input_tokens: 999, output_tokens: 99 }),
    ]);
    expect(await usage(`?from=${date}&to=${date}&agent_id=support`, tokenC)).toEqual([]);
  });

  it("counts real runs of the API: their tokens, and their cost once runs are priced", async () => {
    const token = await createTenantToken();
    const agent = await createAgent({ model: "mock-1", prices: { input: 3, output: 15 } }, token);
    const first = await runTurn(agent.id, { input: "hello there" }, token);
    const second = await runTurn(agent.id, { input: "[[words 20]]", session_id: first.session_id }, token);
    expect(second.status).toBe("completed");
    const runs = [first, second];
    const date = first.created_at.slice(0, 10);
    expect(second.created_at.slice(0, 10)).toBe(date);

    await rollUpUsage(env.DB, date);
    const [row, ...rest] = await usage(`?from=${date}&to=${date}&agent_id=${agent.id}`, token);
    expect(rest).toEqual([]);
    const sum = (pick: (m: RunMetrics) => number) => runs.reduce((total, run) => total + pick(run.metrics), 0);
    expect(row).toMatchObject({
      date,
      agent_id: agent.id,
      runs: 2,
      input_tokens: sum((m) => m.input_tokens),
      output_tokens: sum((m) => m.output_tokens),
      cache_read_tokens: sum((m) => m.cache_read_tokens),
      cache_write_tokens: sum((m) => m.cache_write_tokens),
    });
    expect(row?.input_tokens).toBeGreaterThan(0);
    // The agent is priced: both runs have a cost, and the day's row is their sum.
    const costs = runs.map((r) => r.metrics.cost_usd);
    expect(costs.every((c) => typeof c === "number" && c > 0)).toBe(true);
    expect(row?.cost_usd).toBeCloseTo(
      (costs as number[]).reduce((x, y) => x + y, 0),
      9,
    );
  });

  it("rolls up yesterday and today for the Cron trigger", async () => {
    const tenant = uniqueTenant();
    const token = await createTenantToken(tenant);
    await fixtureRun(tenant, "support", "2025-05-31T12:00:00.000Z", tokens(1, 1));
    await fixtureRun(tenant, "support", "2025-06-01T12:00:00.000Z", tokens(2, 2));
    await fixtureRun(tenant, "support", "2025-06-02T00:01:00.000Z", tokens(3, 3));
    await rollUpRecentUsage(env.DB, new Date("2025-06-02T00:05:00.000Z"));
    const rows = await usage("?from=2025-05-01&to=2025-06-30", token);
    expect(rows.map((r) => [r.date, r.input_tokens])).toEqual([
      ["2025-06-01", 2],
      ["2025-06-02", 3],
    ]);
  });

  it("defaults to the 30 days that end today, and to the 30 days that end on `to`", async () => {
    const tenant = uniqueTenant();
    const token = await createTenantToken(tenant);
    const end = today();
    for (const [offset, input] of [
      [0, 1],
      [-29, 2],
      [-30, 3],
    ] as const) {
      const date = shift(end, offset);
      await fixtureRun(tenant, "support", `${date}T12:00:00.000Z`, tokens(input, 0));
      await rollUpUsage(env.DB, date);
    }
    expect((await usage("", token)).map((r) => r.input_tokens)).toEqual([2, 1]);
    expect((await usage("?from=&to=&agent_id=", token)).map((r) => r.input_tokens)).toEqual([2, 1]);
    expect((await usage(`?to=${shift(end, -1)}`, token)).map((r) => r.input_tokens)).toEqual([3, 2]);
    expect((await usage(`?from=${shift(end, -30)}`, token)).map((r) => r.input_tokens)).toEqual([3, 2, 1]);
  });

  it("accepts a whole leap year", async () => {
    const token = await createTenantToken();
    expect(await usage("?from=2024-01-01&to=2024-12-31", token)).toEqual([]);
  });

  it.each([
    ["?from=2025-02-29&to=2025-03-01", "query.from"],
    ["?from=2025-01-01&to=2025-13-01", "query.to"],
    ["?from=2025-1-5&to=2025-01-31", "query.from"],
    ["?from=2025-01-01T00:00:00Z&to=2025-01-31", "query.from"],
    ["?from=2025-03-10&to=2025-03-09", "query.from"],
    ["?from=2024-01-01&to=2025-01-01", "query.from"],
    [`?from=${shift(today(), 1)}`, "query.from"],
    ["?agent_id=a%2Fb", "query.agent_id"],
    ["?agent=support", "query.agent"],
  ])("answers %s with a 400 naming %s", async (query, path) => {
    const token = await createTenantToken();
    const response = await api(`/v1/usage${query}`, {}, token);
    expect(response.status).toBe(400);
    const body = await response.json<ErrorBody>();
    expect(body.error.type).toBe("invalid_request");
    expect(body.error.details.fields.map((f) => f.path)).toEqual([path]);
  });

  it("needs a token", async () => {
    expect((await api("/v1/usage", {}, null)).status).toBe(401);
  });
});
