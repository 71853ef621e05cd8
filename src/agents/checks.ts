import type { DefinitionProblem } from "./definition-problem";

export type { DefinitionProblem };
import { operatorEndpointProblem, type ProviderEnv } from "../providers";
import { pricesOf } from "../providers/pricing";
import { checkOutboundUrl } from "../core/url-guard";
import { chatToolsNeedNoReasoning, isReasoningModel } from "../providers/openai-reasoning";
import { modelInfo, refusesForcedToolChoice } from "../providers/model-catalog";
import { anthropicSchema } from "../providers/anthropic-output";
import { MAX_OPTIONAL_PARAMETERS, MAX_UNION_PARAMETERS, strictSchemaCounts } from "../providers/anthropic-schema-counts";
import { MOCK_BASE_URL } from "./definition";
import { openaiProblems } from "./openai-limits";
import { schemaProblem } from "./output-validation";
import type { AgentDefinition } from "./definition";
import { toolNameOf } from "./tools";

/** The largest definition stored (D1 rows hold at most 2 MB). */
export const MAX_DEFINITION_BYTES = 1_000_000;

/** The smallest `max_output_tokens` the OpenAI Responses API accepts. */
const RESPONSES_MIN_OUTPUT_TOKENS = 16;

/** What the checks read from the Worker's environment. */
export type CheckEnv = ProviderEnv & { ENVIRONMENT?: string };

/**
 * The provider endpoint rule, checked when an agent is stored and again when a run starts (the
 * operator's variables can change): a `base_url` that is not one of the operator's endpoints
 * needs a credential of the tenant's own (docs/api.md, Provider credentials).
 */
export function endpointProblems(definition: AgentDefinition, env: CheckEnv): DefinitionProblem[] {
  const refused = operatorEndpointProblem(definition, env);
  return refused ? [{ path: "base_url", message: refused }] : [];
}

/**
 * Checks what the schema cannot: outbound URLs (they depend on `ENVIRONMENT`), where the
 * operator's keys may go, a provider's own limits, an output schema the validator could not
 * apply, and the stored size.
 */
export function definitionProblems(definition: AgentDefinition, env: CheckEnv): DefinitionProblem[] {
  const problems: DefinitionProblem[] = [];
  if (definition.base_url !== null && definition.base_url !== MOCK_BASE_URL) {
    const reason = checkOutboundUrl(definition.base_url, env.ENVIRONMENT);
    problems.push(...(reason ? [{ path: "base_url", message: reason }] : endpointProblems(definition, env)));
  }
  definition.tools.forEach((tool, index) => {
    if (tool.type === "builtin") return;
    if (tool.type === "mcp") {
      const refused = checkOutboundUrl(tool.server_url, env.ENVIRONMENT);
      if (refused) problems.push({ path: `tools.${index}.server_url`, message: refused });
      return;
    }
    const description = toolDescriptionProblem(definition.provider, tool.description);
    if (description) problems.push({ path: `tools.${index}.description`, message: description });
    const schema = schemaProblem(tool.parameters);
    if (schema) problems.push({ path: `tools.${index}.parameters`, message: schema });
    if (tool.type !== "webhook") return;
    const reason = checkOutboundUrl(tool.url, env.ENVIRONMENT);
    if (reason) problems.push({ path: `tools.${index}.url`, message: reason });
  });
  problems.push(...settingsProblems(definition));
  const outputProblem = definition.output_schema === null ? null : schemaProblem(definition.output_schema);
  if (outputProblem) problems.push({ path: "output_schema", message: outputProblem });
  else problems.push(...outputSchemaProblems(definition.provider, definition.output_schema));
  if (definition.max_cost_usd !== null && definition.prices === null && pricesOf(definition.model) === null) {
    problems.push({
      path: "max_cost_usd",
      message: `needs a price for model ${definition.model}: it is not in the price table, so set prices`,
    });
  }
  const bytes = new TextEncoder().encode(JSON.stringify(definition)).byteLength;
  if (bytes > MAX_DEFINITION_BYTES) {
    problems.push({ path: "body", message: `the agent definition is ${bytes} bytes, over ${MAX_DEFINITION_BYTES}` });
  }
  return problems;
}

/** Anthropic's rules around extended thinking (docs/agents.md, "Model settings"). */
function thinkingProblems(definition: AgentDefinition, anthropic: boolean, model: ReturnType<typeof modelInfo>): DefinitionProblem[] {
  const thinking = definition.thinking ?? null;
  if (thinking === null) return [];
  if (!anthropic)
    return [{ path: "thinking", message: `is Anthropic's extended thinking; provider ${definition.provider} takes reasoning instead` }];
  const problems: DefinitionProblem[] = [];
  if (model && !model.reasons) problems.push({ path: "thinking", message: `model ${definition.model} does not think` });
  if (thinking.type === "enabled") {
    if (model?.refuses.includes("thinking.budget_tokens")) {
      problems.push({ path: "thinking.type", message: `model ${definition.model} takes only adaptive thinking ({ "type": "adaptive" })` });
    }
    if (thinking.budget_tokens >= definition.max_output_tokens) {
      problems.push({
        path: "thinking.budget_tokens",
        message: `must be below max_output_tokens (${definition.max_output_tokens}): the thinking is part of the output`,
      });
    }
    const choice = definition.tool_choice ?? "auto";
    if (choice !== "auto" && choice !== "none") {
      problems.push({
        path: "tool_choice",
        message: 'must be "auto" or "none" while thinking: Anthropic refuses a forced tool with thinking',
      });
    }
  }
  return problems;
}

/**
 * The grammar limits of Anthropic's structured outputs, counted on the schema as Agentry sends it
 * (`output_config.format`, through the SDK's transform): at most 24 optional and 16 union-typed
 * properties. Agentry sends no strict tools to Anthropic, so the output schema is all there is.
 */
export function outputSchemaProblems(provider: AgentDefinition["provider"], schema: Record<string, unknown> | null): DefinitionProblem[] {
  if (schema === null || (provider !== "anthropic" && provider !== "mock")) return [];
  const { optional, unions } = strictSchemaCounts(anthropicSchema(schema));
  const problems: DefinitionProblem[] = [];
  if (optional > MAX_OPTIONAL_PARAMETERS) {
    problems.push({
      path: "output_schema",
      message: `has ${optional} optional properties (not in required); Anthropic's structured outputs take at most ${MAX_OPTIONAL_PARAMETERS}`,
    });
  }
  if (unions > MAX_UNION_PARAMETERS) {
    problems.push({
      path: "output_schema",
      message: `has ${unions} properties with union types (a type array, anyOf or oneOf); Anthropic's structured outputs take at most ${MAX_UNION_PARAMETERS}`,
    });
  }
  return problems;
}

/** The longest tool description Chat Completions takes ("string too long … maximum length 1024"). */
const CHAT_MAX_TOOL_DESCRIPTION = 1024;

/** Why a tool's description is too long for the provider, or null. */
export function toolDescriptionProblem(provider: AgentDefinition["provider"], description: string | null | undefined): string | null {
  if (provider !== "openai-chat" || !description || description.length <= CHAT_MAX_TOOL_DESCRIPTION) return null;
  return `is ${description.length} characters; Chat Completions takes at most ${CHAT_MAX_TOOL_DESCRIPTION}`;
}

/**
 * The tuned settings a provider and model refuse, as their APIs would refuse them: checked when
 * an agent is stored and for each run's own settings, so no such call is ever sent.
 */
export function settingsProblems(definition: AgentDefinition): DefinitionProblem[] {
  const problems: DefinitionProblem[] = [];
  const choice = definition.tool_choice ?? "auto";
  const tools = definition.tools.map(toolNameOf);
  // An MCP server's tools are known when a run starts: a name in its namespace may name one.
  const named = (name: string) =>
    definition.tools.some((tool) => (tool.type === "mcp" ? name.startsWith(toolNameOf(tool)) : tool.name === name));
  if (typeof choice === "object" && !named(choice.name)) {
    problems.push({ path: "tool_choice.name", message: `names no tool of the agent (its tools: ${tools.join(", ") || "none"})` });
  } else if (choice === "required" && tools.length === 0) {
    problems.push({ path: "tool_choice", message: '"required" needs at least one tool' });
  }
  if (definition.provider === "openai" && definition.max_output_tokens < RESPONSES_MIN_OUTPUT_TOKENS) {
    problems.push({
      path: "max_output_tokens",
      message: `must be at least ${RESPONSES_MIN_OUTPUT_TOKENS} for provider openai (the Responses API refuses less)`,
    });
  }
  const model = modelInfo(definition.provider, definition.model);
  if (model && definition.max_output_tokens > model.max_output_tokens) {
    problems.push({
      path: "max_output_tokens",
      message: `is over the ${model.max_output_tokens} output tokens that model ${definition.model} takes`,
    });
  }
  const anthropic = definition.provider === "anthropic" || definition.provider === "mock";
  const { temperature, top_p, reasoning } = definition;
  problems.push(...thinkingProblems(definition, anthropic, model));
  if (anthropic && (choice === "required" || typeof choice === "object") && refusesForcedToolChoice(definition.model)) {
    problems.push({ path: "tool_choice", message: `must be "auto" or "none" for ${definition.model}: it refuses a forced tool` });
  }
  if (anthropic) {
    // The Messages API version the Anthropic SDK speaks (2026-10-21) refuses every sampling setting.
    for (const [path, value] of [
      ["temperature", temperature],
      ["top_p", top_p],
    ] as const) {
      if (value != null)
        problems.push({
          path,
          message: `is not taken by provider ${definition.provider}: Anthropic's Messages API (version 2026-10-21) has no sampling settings`,
        });
    }
    if (reasoning != null && (reasoning.effort !== null || reasoning.summary !== null)) {
      problems.push({
        path: "reasoning",
        message: `is for OpenAI reasoning models; provider ${definition.provider} has no reasoning effort`,
      });
    }
    return problems;
  }
  const effort = reasoning?.effort ?? null;
  if (
    definition.provider === "openai-chat" &&
    definition.tools.length > 0 &&
    chatToolsNeedNoReasoning(definition.model) &&
    effort !== null &&
    effort !== "none"
  ) {
    problems.push({
      path: "reasoning.effort",
      message: `must be "none" with tools for ${definition.model} on Chat Completions (OpenAI refuses function tools with reasoning there; use provider openai)`,
    });
  }
  if (definition.stop != null && definition.provider === "openai") {
    problems.push({
      path: "stop",
      message: "is not taken by provider openai: the Responses API has no stop sequences (provider openai-chat has)",
    });
  } else if (definition.stop != null && isReasoningModel(definition.model)) {
    problems.push({ path: "stop", message: `is not supported with the reasoning model ${definition.model} (OpenAI refuses it)` });
  }
  if (isReasoningModel(definition.model)) {
    for (const [path, value] of [
      ["temperature", temperature],
      ["top_p", top_p],
    ] as const) {
      if (value != null)
        problems.push({ path, message: `is not supported with the reasoning model ${definition.model} (OpenAI refuses it)` });
    }
  } else if (reasoning != null && (reasoning.effort !== null || reasoning.summary !== null)) {
    problems.push({
      path: "reasoning",
      message: `is only supported by reasoning models; ${definition.model} is not one (OpenAI refuses it)`,
    });
  }
  return [...problems, ...openaiProblems(definition)];
}
