import type { Usage } from "../core/messages";
import type { PriceRow, TokenPrices } from "./price-row";
import { PRICE_TABLE } from "./price-table";

export { PRICES_CHECKED, PRICES_SOURCE } from "./price-table";

/**
 * USD per million tokens. Without `cache_read` / `cache_write` those tokens cost the input
 * price (no discount is assumed). The shape of an agent's `prices` override too.
 */
export type Prices = TokenPrices;

/** A table row's prices: the standard ones and, when the model has one, its long-context tier. */
type TablePrices = Omit<PriceRow, "ids">;

const byId = new Map<string, TablePrices>();
for (const { ids, ...prices } of PRICE_TABLE) for (const id of ids) byId.set(id, prices);

/** A snapshot suffix: Anthropic `-20250929` (Vertex `@20250929`), OpenAI `-2024-08-06`. */
const DATED_SUFFIX = /(?:[-@]\d{8}|-\d{4}-\d{2}-\d{2})$/;

/**
 * The table's prices of a model: an exact id first (a snapshot with its own price), then the
 * id without its date suffix. Nothing else is guessed: `claude-opus-4-9` or `gpt-5-codex` are
 * not their neighbours, and an unknown model has no price (null).
 */
export function pricesOf(model: string): TablePrices | null {
  return byId.get(model) ?? byId.get(model.replace(DATED_SUFFIX, "")) ?? null;
}

/**
 * The cost in USD of one model call from its normalized usage, or null when the price is
 * unknown. `input_tokens` includes cache reads and writes, so the uncached part is billed at
 * the input price and each cache part at its own price; reasoning tokens are already inside
 * `output_tokens` on every provider and are not billed again. A call whose input tokens exceed
 * the model's long-context threshold is billed whole at its long-context prices. `override` (an
 * agent's `prices`) wins over the table. Rounded to 1e-10 USD to drop float noise.
 */
export function costOf(model: string, usage: Usage, override?: Prices | null): number | null {
  const table = override ? null : pricesOf(model);
  const prices = override ?? (table?.long_context && usage.input_tokens > table.long_context.above ? table.long_context : table);
  if (!prices) return null;
  const uncached = Math.max(0, usage.input_tokens - usage.cache_read_tokens - usage.cache_write_tokens);
  const micro =
    uncached * prices.input +
    usage.cache_read_tokens * (prices.cache_read ?? prices.input) +
    usage.cache_write_tokens * (prices.cache_write ?? prices.input) +
    usage.output_tokens * prices.output;
  return Math.round((micro / 1_000_000) * 1e10) / 1e10;
}
