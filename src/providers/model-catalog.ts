import { MODEL_CATALOG as catalog } from "./model-catalog-data";
import type { ProviderName } from "./types";

/** What Agentry knows of one model (scripts/update-model-catalog.mjs writes model-catalog-data.ts; `npm run catalog`). */
export type ModelInfo = {
  id: string;
  provider: "anthropic" | "openai";
  /** Input and output tokens together. */
  context_window: number;
  /** The largest `max_tokens` / `max_output_tokens` the model takes. */
  max_output_tokens: number;
  /** Anthropic extended thinking, OpenAI reasoning. */
  reasons: boolean;
  /** Request settings the model answers 400 to. */
  refuses: string[];
};

const DATED = /^(.+)-(\d{8}|\d{4}-\d{2}-\d{2})$/;

const byId = new Map<string, ModelInfo>();
for (const row of catalog.models as (ModelInfo & { aliases: string[] })[]) {
  for (const id of [row.id, ...row.aliases]) byId.set(`${row.provider}:${id}`, row);
}

/** The vendor whose models an adapter calls: Chat Completions and Responses both serve OpenAI's. */
const vendorOf = (provider: ProviderName | "mock"): "anthropic" | "openai" | null =>
  provider === "anthropic" ? "anthropic" : provider === "openai" || provider === "openai-chat" ? "openai" : null;

/**
 * A model of the catalog by its id as an agent names it (a gateway's `openai/` or `anthropic/`
 * prefix aside, a snapshot date stripped when the dated id is not listed), or null: an unknown
 * model (a fine-tune, a gateway's own name, a model newer than the catalog) has no catalog
 * limits, only its provider's general ones.
 */
export function modelInfo(provider: ProviderName | "mock", model: string): ModelInfo | null {
  const vendor = vendorOf(provider);
  if (vendor === null) return null;
  const name = model.toLowerCase().replace(/^(openai|anthropic)\//, "");
  const exact = byId.get(`${vendor}:${name}`);
  if (exact) return exact;
  const undated = DATED.exec(name)?.[1];
  return undated === undefined ? null : (byId.get(`${vendor}:${undated}`) ?? null);
}

/**
 * Whether an Anthropic model refuses a forced tool choice (`any`, or a named tool): Claude Opus
 * 5.5, Fable 5.1 and Mythos 5.1 take only `auto` and `none` ("tool_choice: type "tool" and "any"
 * are not supported for this model."). By name, as the catalog may not list them yet.
 */
export function refusesForcedToolChoice(model: string): boolean {
  return /^(anthropic\/)?claude-(opus-5-5|fable-5-[1-9]|mythos-5-[1-9])/.test(model.toLowerCase());
}

/**
 * Whether an Anthropic model always thinks (adaptive thinking it cannot turn off): Claude Fable
 * 5.x, Mythos 5.x and Opus 5.5 refuse `thinking: { type: "disabled" }`. By name, as
 * `refusesForcedToolChoice`.
 */
export function alwaysThinks(model: string): boolean {
  return /^(anthropic\/)?claude-(opus-5-5|fable-5|mythos-5)/.test(model.toLowerCase());
}

/**
 * Whether an Anthropic model refuses a final assistant message (prefill): Claude Opus 4.6 and
 * later, Sonnet 5, the 5.5 family, Fable and Mythos.
 */
export function refusesPrefill(model: string): boolean {
  return /^(anthropic\/)?claude-(opus-4-[6-9]|opus-5|sonnet-5|haiku-5|fable|mythos)/.test(model.toLowerCase());
}
