import { z } from "zod";
import { CLIENT_ID } from "../core/ids";
import { objectJsonSchema } from "./json-schema";
import { modelSettingDefaults, modelSettingFields } from "./model-settings";
import { toolsSchema } from "./tools";

/**
 * What a turn on a busy session does (docs/runs.md, Busy sessions): the request's `on_busy`,
 * else the agent's.
 */
export const ON_BUSY = ["reject", "enqueue", "interrupt", "rollback", "steer"] as const;
export type OnBusy = (typeof ON_BUSY)[number];

/** The providers an agent may name; `mock` is `anthropic` against the offline model. */
export const PROVIDERS = ["anthropic", "openai", "openai-chat", "mock"] as const;
/** An agent's `provider`. */
export type Provider = (typeof PROVIDERS)[number];

/** The offline model as a `base_url` (docs/api.md, Agents). */
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
  name: z.string().max(256).nullable().describe("A display name"),
  provider: z
    .enum(PROVIDERS)
    .describe(
      "`anthropic` (Messages API), `openai` (Responses API), `openai-chat` (Chat Completions) or `mock` (the offline model, Anthropic's wire format)",
    ),
  model: z.string().min(1).max(256).describe("The provider's model name, sent as it is"),
  /** Checked by the URL guard at request time (it depends on `ENVIRONMENT`). */
  base_url: z
    .string()
    .min(1)
    .max(2048)
    .nullable()
    .describe(
      "The provider endpoint: null (the operator's), `mock:` (the offline model) or an https URL; without a `credential` it must be one of the operator's endpoints",
    ),
  /** The tenant's own provider credential (`/v1/credentials`); checked at request time. */
  credential: z
    .string()
    .regex(CLIENT_ID, "must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
    .nullable()
    .describe("The id of one of the tenant's provider credentials (`/v1/credentials`) to call the provider with; null: the operator's key"),
  instructions: z.string().describe("The system prompt"),
  tools: toolsSchema.describe(
    "Tools the model may call: builtin, webhook (called by Agentry) and client (the run pauses for the client's result)",
  ),
  output_schema: objectJsonSchema
    .nullable()
    .describe("A JSON Schema (an object) every run's answer must fit: `Run.output` is the parsed object"),
  retries: z.number().int().min(0).max(10).describe("Retries of failed model calls (retryable errors), one budget per run"),
  delay_between_retries: z
    .number()
    .min(0)
    .max(60)
    .describe("Seconds before a retry (a provider's retry-after wins when longer, at most 60 s)"),
  exponential_backoff: z.boolean().describe("Doubles the delay on each retry"),
  max_steps: z.number().int().min(1).max(100).describe("Model calls a run may make; past them the run ends with an error"),
  max_output_tokens: z.number().int().min(1).max(200_000).describe("The output token limit of each model call"),
  ...modelSettingFields,
  max_cost_usd: z
    .number()
    .positive()
    .nullable()
    .describe(
      "A run ends with `run_error` `budget_exceeded` once its cost passes this (USD, checked after each model call; needs a known price); null: no limit",
    ),
  /** Overrides the price table for this agent's model (docs/metrics.md). */
  prices: pricesSchema.nullable().describe("USD per million tokens for this agent's model, over the price table"),
  compaction: compactionSchema
    .nullable()
    .describe("Summarise a branch's older messages before a model call whose request passes `trigger_tokens`; null: never"),
  approval_timeout_seconds: z
    .number()
    .int()
    .min(1)
    .max(30 * 86_400)
    .nullable()
    .describe("A tool call waiting for approval longer than this is denied (`approval timed out`); null: it waits until it is answered"),
  on_busy: z
    .enum(ON_BUSY)
    .describe(
      "What a turn on a session whose run is active does when the turn does not say: `reject` (409 session_busy), `enqueue` (queued behind it), `interrupt` (the active run is cancelled, the turn goes on from what it did), `rollback` (cancelled, the turn goes on from before it) or `steer` (the input joins the active run); see docs/runs.md",
    ),
  store_events: z
    .boolean()
    .describe("Store every event of the agent's runs (replay, resume); false: events are only relayed live and nothing is stored"),
  metadata: metadataSchema.describe("Free-form; `http_get_allow` lists the hosts the builtin `http_get` tool may fetch"),
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
  ...modelSettingDefaults,
  max_cost_usd: fields.max_cost_usd.default(null),
  prices: fields.prices.default(null),
  compaction: fields.compaction.default(null),
  approval_timeout_seconds: fields.approval_timeout_seconds.default(null),
  on_busy: fields.on_busy.default("reject"),
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
