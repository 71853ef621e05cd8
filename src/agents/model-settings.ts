import { z } from "zod";
import { TOOL_NAME } from "./tools";

/**
 * The settings of each model call that people tune, on the agent (defaults) and per run (they
 * override the agent's for that run only). Each provider adapter sends them in its own wire
 * format (docs/agents.md, "Model settings").
 */
export const toolChoiceSchema = z
  .union([z.enum(["auto", "none", "required"]), z.strictObject({ name: z.string().regex(TOOL_NAME, "must match ^[a-zA-Z0-9_-]{1,64}$") })])
  .describe('`auto` (the model decides), `none` (no tool call), `required` (at least one call) or `{ "name" }` (that tool)');

export type ToolChoice = z.output<typeof toolChoiceSchema>;

/** Reasoning effort levels across OpenAI's reasoning models. */
export const REASONING_EFFORTS = ["none", "minimal", "low", "medium", "high", "xhigh"] as const;

export const reasoningSchema = z
  .strictObject({
    effort: z.enum(REASONING_EFFORTS).nullable().default(null),
    summary: z.enum(["auto", "concise", "detailed"]).nullable().default(null),
  })
  .describe("For reasoning models (OpenAI): the effort and whether to return a summary of the reasoning");

export type ReasoningSettings = z.output<typeof reasoningSchema>;

/** The smallest thinking budget Anthropic takes. */
export const MIN_THINKING_BUDGET = 1024;

export const thinkingSchema = z
  .discriminatedUnion("type", [
    z.strictObject({
      type: z.literal("enabled"),
      budget_tokens: z.number().int().min(MIN_THINKING_BUDGET, `must be at least ${MIN_THINKING_BUDGET}`),
    }),
    z.strictObject({ type: z.literal("adaptive") }),
  ])
  .describe(
    'Anthropic extended thinking: `{ "type": "enabled", "budget_tokens" }` (at least 1,024, below max_output_tokens) or `{ "type": "adaptive" }`',
  );

export type ThinkingSettings = z.output<typeof thinkingSchema>;

/** Each setting without a default: a PATCH or a run names only what it changes. */
export const modelSettingFields = {
  temperature: z.number().min(0).max(2).nullable().describe("Sampling temperature, 0 to 2; null: the provider's default"),
  top_p: z.number().min(0).max(1).nullable().describe("Nucleus sampling, 0 to 1; null: the provider's default"),
  tool_choice: toolChoiceSchema,
  parallel_tool_calls: z.boolean().describe("false: at most one tool call per model step"),
  reasoning: reasoningSchema.nullable().describe("Reasoning effort and summary (OpenAI reasoning models); null: the provider's default"),
  max_tool_calls: z
    .number()
    .int()
    .min(1)
    .max(1_000)
    .nullable()
    .describe("Tool calls a run may make; later calls are answered with an error the model reads; null: no limit"),
  thinking: thinkingSchema.nullable().describe("Anthropic extended thinking; null: none"),
  stop: z
    .array(
      z
        .string()
        .max(256)
        .refine((text) => text.trim() !== "", "must contain non-whitespace text"),
    )
    .min(1)
    .max(4)
    .nullable()
    .describe("Up to 4 sequences that end the model's answer where they appear (Anthropic, Chat Completions); null: none"),
};

/** The settings with their defaults, as an agent stores them. */
export const modelSettingDefaults = {
  temperature: modelSettingFields.temperature.default(null),
  top_p: modelSettingFields.top_p.default(null),
  tool_choice: modelSettingFields.tool_choice.default("auto"),
  parallel_tool_calls: modelSettingFields.parallel_tool_calls.default(true),
  reasoning: modelSettingFields.reasoning.default(null),
  max_tool_calls: modelSettingFields.max_tool_calls.default(null),
  thinking: modelSettingFields.thinking.default(null),
  stop: modelSettingFields.stop.default(null),
};

/** The settings an agent (or a run's snapshot of it) carries. */
export type ModelSettings = {
  temperature: number | null;
  top_p: number | null;
  tool_choice: ToolChoice;
  parallel_tool_calls: boolean;
  reasoning: ReasoningSettings | null;
  max_tool_calls: number | null;
  thinking: ThinkingSettings | null;
  stop: string[] | null;
};

/** A stored agent from before these settings: their defaults. */
export function settingsOf(agent: Partial<ModelSettings>): ModelSettings {
  return {
    temperature: agent.temperature ?? null,
    top_p: agent.top_p ?? null,
    tool_choice: agent.tool_choice ?? "auto",
    parallel_tool_calls: agent.parallel_tool_calls ?? true,
    reasoning: agent.reasoning ?? null,
    max_tool_calls: agent.max_tool_calls ?? null,
    thinking: agent.thinking ?? null,
    stop: agent.stop ?? null,
  };
}

/** What one run changes of its agent's settings (its own `instructions` follow the agent's). */
export type RunSettings = Partial<ModelSettings> & { max_output_tokens?: number; instructions?: string | null };

/** The per-run fields of a turn, for the routes that start one (each overrides the agent's). */
export const runSettingFields = {
  instructions: z.string().nullable().optional().describe("Added after the agent's instructions, for this run only"),
  max_output_tokens: z.number().int().min(1).max(200_000).optional().describe("The output token limit of each model call of this run"),
  temperature: modelSettingFields.temperature.optional(),
  top_p: modelSettingFields.top_p.optional(),
  tool_choice: modelSettingFields.tool_choice.optional(),
  parallel_tool_calls: modelSettingFields.parallel_tool_calls.optional(),
  reasoning: modelSettingFields.reasoning.optional(),
  max_tool_calls: modelSettingFields.max_tool_calls.optional(),
  thinking: modelSettingFields.thinking.optional(),
  stop: modelSettingFields.stop.optional(),
};

/** The agent as one run uses it: the run's settings over the agent's; the stored agent is untouched. */
export function withRunSettings<A extends ModelSettings & { instructions: string; max_output_tokens: number }>(
  agent: A,
  run: RunSettings,
): A {
  const { instructions, ...settings } = run;
  const given = Object.fromEntries(Object.entries(settings).filter(([, value]) => value !== undefined));
  return {
    ...agent,
    ...given,
    instructions: [agent.instructions, instructions].filter((text) => typeof text === "string" && text.trim() !== "").join("\n\n"),
  };
}
