import { MAX_OPTIONAL_PARAMETERS, MAX_UNION_PARAMETERS, totalCounts } from "../providers/anthropic-schema-counts";
import { InvalidRequest } from "./conversation";
import { asArray, isObject, type JsonObject } from "./values";

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;
const MAX_TOOL_NAME = 128;
const MAX_STRICT_TOOLS = 20;

/** A custom tool (no `type`, or `custom`); server tools (`web_search_…`) have fixed names. */
const isCustom = (tool: JsonObject): boolean => tool.type === undefined || tool.type === "custom";

/**
 * The Messages API's rules on `tools` and `tool_choice`: custom tool names, unique names,
 * `tool_choice` only with tools, at most 20 strict tools.
 */
export function checkTools(body: JsonObject): void {
  const tools = asArray(body.tools).filter(isObject);
  if (body.tool_choice !== undefined && tools.length === 0)
    throw new InvalidRequest("tool_choice may only be specified while providing tools.");
  tools.forEach((tool, index) => {
    if (!isCustom(tool)) return;
    const name = typeof tool.name === "string" ? tool.name : "";
    if (name.length > MAX_TOOL_NAME)
      throw new InvalidRequest(`tools.${index}.custom.name: String should have at most ${MAX_TOOL_NAME} characters`);
    if (!TOOL_NAME.test(name)) throw new InvalidRequest(`tools.${index}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`);
  });
  const names = tools.map((tool) => tool.name);
  if (new Set(names).size !== names.length) throw new InvalidRequest("tools: Tool names must be unique.");
  const strict = tools.filter((tool) => tool.strict === true).length;
  if (strict > MAX_STRICT_TOOLS) {
    throw new InvalidRequest(`Too many strict tools (${strict}). The maximum number of strict tools supported is ${MAX_STRICT_TOOLS}.`);
  }
}

/**
 * The grammar limits of one request's strict schemas together: the structured-output schema and
 * every strict tool's `input_schema` (at most 24 optional and 16 union-typed parameters).
 */
export function checkStrictSchemaCounts(body: JsonObject): void {
  const config = isObject(body.output_config) ? body.output_config : {};
  const format = isObject(config.format) ? config.format : isObject(body.output_format) ? body.output_format : null;
  const schemas = [
    ...(format?.type === "json_schema" ? [format.schema] : []),
    ...asArray(body.tools)
      .filter((tool) => isObject(tool) && tool.strict === true)
      .map((tool) => (isObject(tool) ? tool.input_schema : null)),
  ];
  const { optional, unions } = totalCounts(schemas);
  if (optional > MAX_OPTIONAL_PARAMETERS) {
    throw new InvalidRequest(
      `Schemas contains too many optional parameters (${optional}), which would make grammar compilation inefficient. Reduce the number of optional parameters in your tool schemas (limit: ${MAX_OPTIONAL_PARAMETERS}).`,
    );
  }
  if (unions > MAX_UNION_PARAMETERS) {
    throw new InvalidRequest(
      `Schemas contains too many parameters with union types (${unions} parameters with type arrays or anyOf). This causes exponential compilation cost. Reduce the number of nullable or union-typed parameters (limit: ${MAX_UNION_PARAMETERS} parameters with unions).`,
    );
  }
}
