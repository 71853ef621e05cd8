/** Prices in USD per million tokens of one model call. */
export type TokenPrices = { input: number; output: number; cache_read?: number; cache_write?: number };

/** A long-context tier: the whole request costs these prices once its input tokens exceed `above`. */
export type LongContextPrices = TokenPrices & { above: number };

/** One model family: its ids (aliases included), prices and long-context tier. Dated snapshots match by family. */
export type PriceRow = TokenPrices & { ids: readonly string[]; long_context?: LongContextPrices };

/** A row of the generated table (scripts/update-prices.mjs). */
export const row = (
  ids: string[],
  input: number,
  output: number,
  cache_read?: number,
  cache_write?: number,
  long_context?: LongContextPrices,
): PriceRow => ({
  ids,
  input,
  output,
  ...(cache_read === undefined ? {} : { cache_read }),
  ...(cache_write === undefined ? {} : { cache_write }),
  ...(long_context === undefined ? {} : { long_context }),
});
