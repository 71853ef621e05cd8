import { chatToolsNeedNoReasoning } from "../providers/openai-reasoning";
import { supportedEfforts } from "../providers/openai-efforts";
import type { AgentDefinition } from "./definition";
import type { DefinitionProblem } from "./definition-problem";

/** The most tools OpenAI takes in one request ("Invalid 'tools': array too long … maximum length 128"). */
export const OPENAI_MAX_TOOLS = 128;

/**
 * OpenAI's request limits an agent (or a run's agent, its request tools added) could break:
 * the tool count, and a reasoning effort the model does not take, including the `none` that
 * Chat Completions needs with tools on gpt-5.4 and later (docs/vendor-limits.md, R8, R20, C15,
 * C19). Nothing for other providers.
 */
export function openaiProblems(definition: AgentDefinition): DefinitionProblem[] {
  const { provider, model, tools } = definition;
  if (provider !== "openai" && provider !== "openai-chat") return [];
  const problems: DefinitionProblem[] = [];
  if (tools.length > OPENAI_MAX_TOOLS) {
    problems.push({ path: "tools", message: `has ${tools.length} tools; OpenAI takes at most ${OPENAI_MAX_TOOLS} in a request` });
  }
  const asked = definition.reasoning?.effort ?? null;
  const forced = provider === "openai-chat" && tools.length > 0 && chatToolsNeedNoReasoning(model);
  const effort = asked ?? (forced ? "none" : null);
  const supported = effort === null ? null : supportedEfforts(model);
  if (effort !== null && supported !== null && !supported.includes(effort)) {
    const takes = `model ${model} takes only ${supported.join(", ")}`;
    problems.push(
      asked !== null
        ? { path: "reasoning.effort", message: `is "${effort}"; ${takes} (OpenAI refuses others)` }
        : { path: "tools", message: `need reasoning effort "none" on Chat Completions, and ${takes}: use provider openai` },
    );
  }
  return problems;
}
