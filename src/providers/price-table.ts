/**
 * List prices in USD per million tokens (standard tier: no batch, flex or priority prices, no
 * long-context surcharge). `cache_write` is Anthropic's 5-minute cache write; OpenAI has no
 * cache-write price, so its rows leave it out and cache writes cost the input price.
 *
 * Written from the engineer's knowledge of the providers' pricing pages, not checked online:
 * re-check them (docs/metrics.md) before billing anyone.
 */
export const PRICES_CHECKED = "2025-12";

/** One model family: its ids (aliases included) and prices. Dated snapshots match by family. */
export type PriceRow = {
  ids: readonly string[];
  input: number;
  output: number;
  cache_read?: number;
  cache_write?: number;
};

const row = (ids: string[], input: number, output: number, cache_read?: number, cache_write?: number): PriceRow => ({
  ids,
  input,
  output,
  ...(cache_read === undefined ? {} : { cache_read }),
  ...(cache_write === undefined ? {} : { cache_write }),
});

/** Columns: ids, input, output, cache read, cache write (5 minutes). */
export const PRICE_TABLE: readonly PriceRow[] = [
  row(["claude-opus-4-5"], 5, 25, 0.5, 6.25),
  row(["claude-opus-4-1"], 15, 75, 1.5, 18.75),
  row(["claude-opus-4", "claude-opus-4-0"], 15, 75, 1.5, 18.75),
  row(["claude-sonnet-4-5"], 3, 15, 0.3, 3.75),
  row(["claude-sonnet-4", "claude-sonnet-4-0"], 3, 15, 0.3, 3.75),
  row(["claude-3-7-sonnet", "claude-3-7-sonnet-latest"], 3, 15, 0.3, 3.75),
  row(["claude-haiku-4-5"], 1, 5, 0.1, 1.25),
  row(["claude-3-5-haiku", "claude-3-5-haiku-latest"], 0.8, 4, 0.08, 1),
  row(["claude-3-haiku"], 0.25, 1.25, 0.03, 0.3),

  row(["gpt-5", "gpt-5.1"], 1.25, 10, 0.125),
  row(["gpt-5-mini"], 0.25, 2, 0.025),
  row(["gpt-5-nano"], 0.05, 0.4, 0.005),
  row(["gpt-4.1"], 2, 8, 0.5),
  row(["gpt-4.1-mini"], 0.4, 1.6, 0.1),
  row(["gpt-4.1-nano"], 0.1, 0.4, 0.025),
  row(["gpt-4o"], 2.5, 10, 1.25),
  // The first gpt-4o snapshot kept its launch price and has no cached-input discount.
  row(["gpt-4o-2024-05-13"], 5, 15),
  row(["gpt-4o-mini"], 0.15, 0.6, 0.075),
  row(["o3"], 2, 8, 0.5),
  row(["o4-mini"], 1.1, 4.4, 0.275),
  row(["o3-mini"], 1.1, 4.4, 0.55),
  row(["o1"], 15, 60, 7.5),
];
