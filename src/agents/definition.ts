import { z } from "zod";
import { CLIENT_ID } from "../core/ids";
import { objectJsonSchema } from "./json-schema";
import { toolsSchema } from "./tools";

/** The providers an agent may name; `mock` is `anthropic` against the offline model. */
export const PROVIDERS = ["anthropic", "openai", "openai-chat", "mock"] as const;
/** An agent's `provider`. */
export type Provider = (typeof PROVIDERS)[number];

/** The offline model as a `base_url` (API.md, Agents). */
export const MOCK_BASE_URL = "mock:";

const compactionSchema = z.strictObject({
  enabled: z.boolean().default(true),
  trigger_tokens: z.number().int().min(1_000).max(10_000_000).default(120_000),
  keep_last_messages: z.number().int().min(0).max(1_000).default(8),
});

/** USD per million tokens; a missing cache price means the input price (src/providers/pricing.ts). */
const price = z.number().min(0, "must be a non-negative number (USD per million tokens)");
const pricesSchema = z.strictObject({
  input: price,
  output: price,
  cache_read: price.optional(),
  cache_write: price.optional(),
});

const metadataSchema = z.looseObject({
  /** Hosts the builtin `http_get` tool may fetch. */
  http_get_allow: z.array(z.string().min(1).max(253)).max(100).optional(),
});

/** Each field of a definition, without defaults: a PATCH names only what it changes. */
const fields = {
  name: z.string().max(256).nullable(),
  provider: z.enum(PROVIDERS),
  model: z.string().min(1).max(256),
  /** Checked by the URL guard at request time (it depends on `ENVIRONMENT`). */
  base_url: z.string().min(1).max(2048).nullable(),
  /** The tenant's own provider credential (`/v1/credentials`); checked at request time. */
  credential: z.string().regex(CLIENT_ID, "must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$").nullable(),
  instructions: z.string(),
  tools: toolsSchema,
  output_schema: objectJsonSchema.nullable(),
  retries: z.number().int().min(0).max(10),
  delay_between_retries: z.number().min(0).max(60),
  exponential_backoff: z.boolean(),
  max_steps: z.number().int().min(1).max(100),
  max_output_tokens: z.number().int().min(1).max(200_000),
  max_cost_usd: z.number().positive().nullable(),
  /** Overrides the price table for this agent's model (docs/metrics.md). */
  prices: pricesSchema.nullable(),
  compaction: compactionSchema.nullable(),
  store_events: z.boolean(),
  metadata: metadataSchema,
};

const definitionShape = {
  name: fields.name.default(null),
  provider: fields.provider,
  model: fields.model,
  base_url: fields.base_url.default(null),
  credential: fields.credential.default(null),
  instructions: fields.instructions.default(""),
  tools: fields.tools.default([]),
  output_schema: fields.output_schema.default(null),
  retries: fields.retries.default(0),
  delay_between_retries: fields.delay_between_retries.default(1),
  exponential_backoff: fields.exponential_backoff.default(false),
  max_steps: fields.max_steps.default(25),
  max_output_tokens: fields.max_output_tokens.default(4096),
  max_cost_usd: fields.max_cost_usd.default(null),
  prices: fields.prices.default(null),
  compaction: fields.compaction.default(null),
  store_events: fields.store_events.default(true),
  metadata: fields.metadata.default({}),
};

/** A stored definition: every field, defaults filled (no id, version or times). */
export const agentDefinitionSchema = z.strictObject(definitionShape);

/** `POST /v1/agents`: a definition with an optional client-chosen id. */
export const agentCreateSchema = z.strictObject({
  id: z.string().regex(CLIENT_ID, "must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$").optional(),
  ...definitionShape,
});

/** `PATCH /v1/agents/{agent_id}`: any subset of the fields; each replaces the stored value. */
export const agentPatchSchema = z.strictObject(fields).partial();

/** The Agent object of the API. */
export const agentSchema = z.object({
  id: z.string(),
  ...definitionShape,
  version: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
});

/** A definition with defaults filled: what the `definition` column stores. */
export type AgentDefinition = z.output<typeof agentDefinitionSchema>;
/** A validated `POST /v1/agents` body. */
export type AgentCreate = z.output<typeof agentCreateSchema>;
/** A validated `PATCH` body: only the fields it changes. */
export type AgentPatch = z.output<typeof agentPatchSchema>;
/** A stored agent as the API shows it and runs use it (`version` is reported as `agent_version`). */
export type Agent = { id: string } & AgentDefinition & { version: number; created_at: string; updated_at: string };
/** An agent's `compaction` settings (defaults filled). */
export type Compaction = z.output<typeof compactionSchema>;

/** The definition part of an agent (what the `definition` column stores). */
export function definitionOf(agent: Agent): AgentDefinition {
  const { id: _id, version: _version, created_at: _created, updated_at: _updated, ...definition } = agent;
  return definition;
}
