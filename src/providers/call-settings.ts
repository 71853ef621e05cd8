import type { ToolChoice } from "../agents/model-settings";
import type { CallSettings } from "./types";

/** Anthropic's `tool_choice`: `required` is `any`; `parallel_tool_calls: false` disables parallel use (not with `none`). */
export function anthropicToolChoice(settings: CallSettings | undefined, hasTools: boolean) {
  const choice = settings?.tool_choice;
  const serial = settings?.parallel_tool_calls === false;
  if (!hasTools || (choice === undefined && !serial)) return undefined;
  if (choice === "none") return { type: "none" as const };
  const parallel = serial ? { disable_parallel_tool_use: true } : {};
  if (choice === "required") return { type: "any" as const, ...parallel };
  if (typeof choice === "object") return { type: "tool" as const, name: choice.name, ...parallel };
  return { type: "auto" as const, ...parallel };
}

/** OpenAI Responses' `tool_choice`: a named tool is `{ type: "function", name }`. */
export function responsesToolChoice(choice: ToolChoice | undefined) {
  if (choice === undefined) return undefined;
  return typeof choice === "object" ? { type: "function" as const, name: choice.name } : choice;
}

/** Chat Completions' `tool_choice`: a named tool is `{ type: "function", function: { name } }`. */
export function chatToolChoice(choice: ToolChoice | undefined) {
  if (choice === undefined) return undefined;
  return typeof choice === "object" ? { type: "function" as const, function: { name: choice.name } } : choice;
}

/** OpenAI's `reasoning` object, or undefined when nothing is set. */
export function openAiReasoning(settings: CallSettings | undefined) {
  const reasoning = settings?.reasoning;
  if (!reasoning || (reasoning.effort === null && reasoning.summary === null)) return undefined;
  return {
    ...(reasoning.effort !== null ? { effort: reasoning.effort } : {}),
    ...(reasoning.summary !== null ? { summary: reasoning.summary } : {}),
  };
}
