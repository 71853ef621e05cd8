import type { ToolDirective } from "./directives";
import { sampleValue } from "./sample-json";
import { asArray, asString, isObject, type JsonObject } from "./values";

/** A request's tool choice, whatever its wire format: what a real model obeys. */
export type ToolChoiceView = { mode: "auto" | "none" | "required"; name: string | null; serial: boolean };

/** Reads `tool_choice` (and parallel use) from a Messages, Responses or Chat Completions body. */
export function toolChoiceOf(raw: JsonObject): ToolChoiceView {
  const choice = raw.tool_choice;
  const serial = raw.parallel_tool_calls === false || (isObject(choice) && choice.disable_parallel_tool_use === true);
  if (choice === "none" || (isObject(choice) && choice.type === "none")) return { mode: "none", name: null, serial };
  if (choice === "required" || (isObject(choice) && choice.type === "any")) return { mode: "required", name: null, serial };
  if (isObject(choice) && (choice.type === "tool" || choice.type === "function")) {
    const fn = isObject(choice.function) ? choice.function : choice;
    return { mode: "required", name: asString(fn.name) ?? null, serial };
  }
  return { mode: "auto", name: null, serial };
}

/** The request's tools by name with their parameter schemas, whatever the wire format. */
function toolSchemas(raw: JsonObject): Map<string, JsonObject> {
  const schemas = new Map<string, JsonObject>();
  for (const tool of asArray(raw.tools).filter(isObject)) {
    const fn = isObject(tool.function) ? tool.function : tool;
    const name = asString(fn.name);
    const schema = fn.input_schema ?? fn.parameters;
    if (name !== undefined) schemas.set(name, isObject(schema) ? schema : { type: "object" });
  }
  return schemas;
}

/**
 * The calls a model makes under the request's tool choice: none with `none`; with `required` or
 * a named tool and no call of its own planned, one call of that tool (the first one for
 * `required`) with arguments sampled from its schema, as a real model must call one.
 */
export function obeyToolChoice(raw: JsonObject, planned: ToolDirective[], answeredSinceUser: number): ToolDirective[] {
  const choice = toolChoiceOf(raw);
  if (choice.mode === "none") return [];
  if (choice.mode === "auto" || planned.length > 0 || answeredSinceUser > 0) return planned;
  const schemas = toolSchemas(raw);
  const name = choice.name ?? [...schemas.keys()][0];
  if (name === undefined) return planned;
  const sampled = sampleValue(schemas.get(name) ?? { type: "object" });
  return [{ name, arguments: isObject(sampled) ? sampled : {} }];
}
