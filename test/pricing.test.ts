import { describe, expect, it } from "vitest";
import type { Usage } from "../src/core/messages";
import { PRICE_TABLE } from "../src/providers/price-table";
import { PRICES_CHECKED, PRICES_SOURCE, costOf, pricesOf } from "../src/providers/pricing";
import type { Agent } from "../src/agents";
import { api, createAgent, createTenantToken } from "./support/http";

const usage = (fields: Partial<Usage>): Usage => ({
  input_tokens: 0,
  output_tokens: 0,
  cache_read_tokens: 0,
  cache_write_tokens: 0,
  reasoning_tokens: 0,
  ...fields,
});

const M = 1_000_000;

/**
 * Provider list prices, USD per million tokens: [id, input, output, cache read, cache write],
 * as @pydantic/genai-prices 0.1.8 has them (docs/metrics.md says which were cross-checked where).
 */
const LIST_PRICES: [string, number, number, number, number][] = [
  ["claude-opus-5", 5, 25, 0.5, 6.25],
  ["claude-opus-4-8", 5, 25, 0.5, 6.25],
  ["claude-opus-4-7", 5, 25, 0.5, 6.25],
  ["claude-opus-4-6", 5, 25, 0.5, 6.25],
  ["claude-sonnet-5", 2, 10, 0.2, 2.5],
  ["claude-sonnet-4-6", 3, 15, 0.3, 3.75],
  ["claude-opus-4-5", 5, 25, 0.5, 6.25],
  ["claude-opus-4-1", 15, 75, 1.5, 18.75],
  ["claude-opus-4-0", 15, 75, 1.5, 18.75],
  ["claude-sonnet-4-5", 3, 15, 0.3, 3.75],
  ["claude-sonnet-4-0", 3, 15, 0.3, 3.75],
  ["claude-3-7-sonnet-latest", 3, 15, 0.3, 3.75],
  ["claude-haiku-4-5", 1, 5, 0.1, 1.25],
  ["claude-3-5-haiku-latest", 0.8, 4, 0.08, 1],
  ["claude-3-haiku", 0.25, 1.25, 0.03, 0.3],
  // GPT-5.6 bills cache writes at 1.25× input.
  ["gpt-5.6", 4, 20, 0.4, 5],
  ["gpt-5.6-sol", 4, 20, 0.4, 5],
  ["gpt-5.6-terra", 2, 12, 0.2, 2.5],
  ["gpt-5.6-luna", 0.2, 1.2, 0.02, 0.25],
  // Older OpenAI models have no cache-write price: such tokens cost the input price.
  ["gpt-5.5", 5, 30, 0.5, 5],
  ["gpt-5.5-pro", 30, 180, 30, 30],
  ["gpt-5.4", 2.5, 15, 0.25, 2.5],
  ["gpt-5.4-mini", 0.75, 4.5, 0.075, 0.75],
  ["gpt-5.4-nano", 0.2, 1.25, 0.02, 0.2],
  ["gpt-5.3", 1.75, 14, 0.175, 1.75],
  ["gpt-5.2", 1.75, 14, 0.175, 1.75],
  ["gpt-5-pro", 15, 120, 15, 15],
  ["gpt-5", 1.25, 10, 0.125, 1.25],
  ["gpt-5.1", 1.25, 10, 0.125, 1.25],
  ["gpt-5-mini", 0.25, 2, 0.025, 0.25],
  ["gpt-5-nano", 0.05, 0.4, 0.005, 0.05],
  ["gpt-4.1", 2, 8, 0.5, 2],
  ["gpt-4.1-mini", 0.4, 1.6, 0.1, 0.4],
  ["gpt-4.1-nano", 0.1, 0.4, 0.025, 0.1],
  ["gpt-4o", 2.5, 10, 1.25, 2.5],
  ["gpt-4o-mini", 0.15, 0.6, 0.075, 0.15],
  ["o3", 2, 8, 0.5, 2],
  ["o4-mini", 1.1, 4.4, 0.275, 1.1],
  ["o3-mini", 1.1, 4.4, 0.55, 1.1],
  ["o1", 15, 60, 7.5, 15],
];

/** The price per million tokens of each kind, priced alone from 100,000 tokens (below every long-context threshold). */
const perMillion = (model: string) => {
  const K = M / 10;
  const scaled = (cost: number | null) => (cost === null ? null : Math.round(cost * 10 * 1e9) / 1e9);
  return {
    input: scaled(costOf(model, usage({ input_tokens: K }))),
    output: scaled(costOf(model, usage({ output_tokens: K }))),
    cache_read: scaled(costOf(model, usage({ input_tokens: K, cache_read_tokens: K }))),
    cache_write: scaled(costOf(model, usage({ input_tokens: K, cache_write_tokens: K }))),
  };
};

describe("the price table", () => {
  it("has a checked date and names its source", () => {
    expect(PRICES_CHECKED).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(PRICES_SOURCE).toMatch(/^@pydantic\/genai-prices \d+\.\d+\.\d+$/);
  });

  it.each(LIST_PRICES)("prices %s at its list prices", (model, input, output, cacheRead, cacheWrite) => {
    expect(perMillion(model)).toEqual({ input, output, cache_read: cacheRead, cache_write: cacheWrite });
  });

  it("lists every row of the table here, so a new row gets its test", () => {
    const tested = new Set(LIST_PRICES.map(([id]) => id));
    for (const row of PRICE_TABLE) {
      if (row.ids.includes("gpt-4o-2024-05-13")) continue; // a snapshot, tested below
      expect(
        row.ids.some((id) => tested.has(id)),
        row.ids.join(", "),
      ).toBe(true);
    }
  });

  it.each([
    ["claude-sonnet-4-5-20250929", "claude-sonnet-4-5"],
    ["claude-sonnet-4-5@20250929", "claude-sonnet-4-5"],
    ["claude-sonnet-4-20250514", "claude-sonnet-4-0"],
    ["claude-opus-4-20250514", "claude-opus-4-0"],
    ["claude-opus-4-1-20250805", "claude-opus-4-1"],
    ["claude-opus-4-5-20251101", "claude-opus-4-5"],
    ["claude-haiku-4-5-20251001", "claude-haiku-4-5"],
    ["claude-3-5-haiku-20241022", "claude-3-5-haiku-latest"],
    ["claude-3-7-sonnet-20250219", "claude-3-7-sonnet-latest"],
    ["gpt-4o-2024-08-06", "gpt-4o"],
    ["gpt-4o-2024-11-20", "gpt-4o"],
    ["gpt-4o-mini-2024-07-18", "gpt-4o-mini"],
    ["gpt-5-2025-08-07", "gpt-5"],
    ["gpt-5-mini-2025-08-07", "gpt-5-mini"],
    ["gpt-5-nano-2025-08-07", "gpt-5-nano"],
    ["gpt-4.1-2025-04-14", "gpt-4.1"],
    ["gpt-4.1-mini-2025-04-14", "gpt-4.1-mini"],
    ["o3-2025-04-16", "o3"],
    ["o4-mini-2025-04-16", "o4-mini"],
    ["gpt-5.2-2025-12-11", "gpt-5.2"],
    ["gpt-5.4-mini-2026-03-17", "gpt-5.4-mini"],
  ])("matches the dated id %s to %s", (dated, family) => {
    expect(pricesOf(dated)).not.toBeNull();
    expect(pricesOf(dated)).toEqual(pricesOf(family));
  });

  it("prices a snapshot with its own price before its family's", () => {
    expect(perMillion("gpt-4o-2024-05-13")).toEqual({ input: 5, output: 15, cache_read: 5, cache_write: 5 });
  });

  it.each([
    "mock-1",
    "claude-opus-4-9",
    "gpt-5-codex",
    "gpt-5.6-sol-mini",
    "claude-sonnet-4-5-v2",
    "gpt-4o-realtime-preview",
    "GPT-4O",
    "gpt-4o-2024-08-06-extra",
    "anthropic.claude-sonnet-4-5-20250929-v1:0",
    "",
  ])("has no price for %j: its cost is null, never a guess", (model) => {
    expect(pricesOf(model)).toBeNull();
    expect(costOf(model, usage({ input_tokens: 10, output_tokens: 10 }))).toBeNull();
  });
});

describe("costOf", () => {
  it("bills a call over the long-context threshold whole at the long-context prices", () => {
    // gpt-5.4: $2.50 / $15 / $0.25 up to 272K input tokens; over it $5 / $22.50 / $0.50 for the whole call.
    //   at 271,999: 171,999 × 2.50 + 100,000 × 0.25 + 10,000 × 15 = 429,997.5 + 25,000 + 150,000 = $0.6049975
    //   at 272,000: 172,000 × 5 + 100,000 × 0.50 + 10,000 × 22.50 = 860,000 + 50,000 + 225,000 = $1.135
    const call = (input_tokens: number) => usage({ input_tokens, cache_read_tokens: 100_000, output_tokens: 10_000 });
    expect(costOf("gpt-5.4", call(271_999))).toBe(0.6049975);
    expect(costOf("gpt-5.4", call(272_000))).toBe(1.135);
    // gpt-5.6 keeps its cache-write price over the threshold, doubled: 300,000 writes × $10 = $3.
    expect(costOf("gpt-5.6", usage({ input_tokens: 300_000, cache_write_tokens: 300_000 }))).toBe(3);
    // Claude Opus 4.8 has flat pricing over its whole 1M window.
    expect(costOf("claude-opus-4-8", usage({ input_tokens: 500_000 }))).toBe(2.5);
    // An agent's override has no tier.
    expect(costOf("gpt-5.4", call(272_000), { input: 1, output: 1 })).toBe(0.282);
  });

  it("bills the uncached input, cache reads, cache writes and output each at its price", () => {
    // claude-sonnet-4-5: input $3, output $15, cache read $0.30, cache write $3.75 per million.
    // 10,000 input tokens of which 6,000 cache reads and 2,000 cache writes: 2,000 uncached.
    //   2,000 × 3 + 6,000 × 0.30 + 2,000 × 3.75 + 1,000 × 15 = 6,000 + 1,800 + 7,500 + 15,000
    //   = 30,300 micro-dollars = $0.0303
    const call = usage({ input_tokens: 10_000, cache_read_tokens: 6_000, cache_write_tokens: 2_000, output_tokens: 1_000 });
    expect(costOf("claude-sonnet-4-5-20250929", call)).toBe(0.0303);
  });

  it("does not bill reasoning tokens again: they are inside output_tokens", () => {
    // gpt-4o: 600,000 uncached × $2.50 + 400,000 cached × $1.25 + 100,000 output × $10
    //   = $1.50 + $0.50 + $1.00 = $3.00 (billing the 50,000 reasoning tokens again would be $3.50)
    const call = usage({ input_tokens: M, cache_read_tokens: 400_000, output_tokens: 100_000, reasoning_tokens: 50_000 });
    expect(costOf("gpt-4o", call)).toBe(3);
  });

  it("costs 0 for a call with no tokens on a known model, null on an unknown one", () => {
    expect(costOf("gpt-5-nano", usage({}))).toBe(0);
    expect(costOf("mock-1", usage({}))).toBeNull();
  });

  it("never bills a negative uncached part when the usage is inconsistent", () => {
    expect(costOf("claude-haiku-4-5", usage({ input_tokens: 0, cache_read_tokens: M }))).toBe(0.1);
  });

  it("lets an override win over the table and price unknown models", () => {
    const prices = { input: 2, output: 4, cache_read: 1, cache_write: 3 };
    // 1,000 uncached × 2 + 500 reads × 1 + 500 writes × 3 + 250 output × 4 = 5,000 micro-dollars
    const call = usage({ input_tokens: 2_000, cache_read_tokens: 500, cache_write_tokens: 500, output_tokens: 250 });
    expect(costOf("mock-1", call, prices)).toBe(0.005);
    expect(costOf("claude-opus-4-5", call, prices)).toBe(0.005);
    expect(costOf("claude-opus-4-5", call, null)).toBe(costOf("claude-opus-4-5", call));
  });

  it("bills the cache parts of an override without cache prices at its input price", () => {
    const call = usage({ input_tokens: 3_000, cache_read_tokens: 1_000, cache_write_tokens: 1_000 });
    expect(costOf("mock-1", call, { input: 1, output: 100 })).toBe(0.003);
  });

  it("drops float noise", () => {
    // 0.1 + 0.2 in floats is 0.30000000000000004
    const call = usage({ input_tokens: 100_000, output_tokens: 20_000 });
    expect(costOf("mock-1", call, { input: 1, output: 10 })).toBe(0.3);
  });
});

describe("an agent's prices override", () => {
  const base = { provider: "mock", model: "mock-1" };

  it("defaults to null and stores the prices given", async () => {
    const token = await createTenantToken();
    expect((await createAgent(base, token)).prices).toBeNull();
    const agent = await createAgent({ ...base, prices: { input: 3, output: 15, cache_read: 0.3 } }, token);
    expect(agent.prices).toEqual({ input: 3, output: 15, cache_read: 0.3 });
    const read = await api(`/v1/agents/${agent.id}`, {}, token);
    expect((await read.json<Agent>()).prices).toEqual({ input: 3, output: 15, cache_read: 0.3 });
  });

  it("is changed and cleared by PATCH, each a new version", async () => {
    const token = await createTenantToken();
    const agent = await createAgent({ ...base, prices: { input: 1, output: 2 } }, token);
    const changed = await api(`/v1/agents/${agent.id}`, { method: "PATCH", body: { prices: { input: 0, output: 0 } } }, token);
    expect(await changed.json<Agent>()).toMatchObject({ prices: { input: 0, output: 0 }, version: 2 });
    const cleared = await api(`/v1/agents/${agent.id}`, { method: "PATCH", body: { prices: null } }, token);
    expect(await cleared.json<Agent>()).toMatchObject({ prices: null, version: 3 });
  });

  it.each([
    [{ input: -1, output: 2 }, "prices.input"],
    [{ input: 1, output: "2" }, "prices.output"],
    [{ input: 1 }, "prices.output"],
    [{ input: 1, output: 2, cache_read: -0.1 }, "prices.cache_read"],
    [{ input: 1, output: 2, cache_write: null }, "prices.cache_write"],
    [{ input: 1, output: 2, cache_writes: 1 }, "prices.cache_writes"],
    ["cheap", "prices"],
  ])("refuses prices %j with a 400 naming %s", async (prices, path) => {
    const token = await createTenantToken();
    const response = await api("/v1/agents", { body: { ...base, prices } }, token);
    expect(response.status).toBe(400);
    const body = await response.json<{ error: { type: string; details: { fields: { path: string }[] } } }>();
    expect(body.error.type).toBe("invalid_request");
    expect(body.error.details.fields.map((f) => f.path)).toContain(path);
    const list = await api("/v1/agents", {}, token);
    expect((await list.json<{ data: unknown[] }>()).data).toEqual([]);
  });
});
