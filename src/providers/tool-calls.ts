import { fnv1a } from "../core/fnv1a";
import { depthExceeds, jsonDepthExcess, MAX_JSON_DEPTH } from "../core/json-depth";

/**
 * Parses the JSON string of a model's tool arguments. An empty string is a call without
 * arguments (`{}`). Anything that is not a JSON object within MAX_JSON_DEPTH levels — invalid
 * JSON, an array, a number, a value nested too deep to store — is kept as the raw string:
 * turning it into `{}` would run the tool with arguments the model never gave, while the raw
 * string is refused as a tool error the model sees and can correct.
 */
export function parseToolArguments(json: string): unknown {
  if (json.trim() === "") return {};
  if (jsonDepthExcess(json) !== null) return json;
  try {
    const value: unknown = JSON.parse(json);
    return isObject(value) ? value : json;
  } catch {
    return json;
  }
}

/** Arguments a provider's SDK already parsed: kept when within MAX_JSON_DEPTH, else a note the tool refuses. */
export function boundToolArguments(value: unknown): unknown {
  return depthExceeds(value) ? TOO_DEEP_ARGUMENTS : value;
}

/** What stands for parsed arguments nested too deep to keep. */
export const TOO_DEEP_ARGUMENTS = `[arguments nested deeper than ${MAX_JSON_DEPTH} levels]`;

/** The JSON string form of neutral tool arguments (a raw string, from `parseToolArguments`, goes back as it was). */
export function stringifyToolArguments(args: unknown): string {
  if (typeof args === "string") return args;
  return JSON.stringify(args ?? {});
}

/** Neutral tool arguments as a JSON object, for wire formats that only accept one (Anthropic `input`). */
export function toolArgumentsObject(args: unknown): Record<string, unknown> {
  return isObject(args) ? args : {};
}

const SAFE_ID = /^[a-zA-Z0-9_-]+$/;

/**
 * Makes a tool call id acceptable to every provider (`^[a-zA-Z0-9_-]+$`, at most `maxLength`
 * characters), deterministically: a valid id is kept as is, any other gets its invalid
 * characters replaced and a hash of the original appended, so two ids never collide and
 * a call and its result always map to the same id.
 */
export function wireToolCallId(id: string, maxLength = 64): string {
  if (SAFE_ID.test(id) && id.length <= maxLength) return id;
  const hash = fnv1a(id);
  const head = id.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, maxLength - hash.length - 1);
  return `${head || "call"}_${hash}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
