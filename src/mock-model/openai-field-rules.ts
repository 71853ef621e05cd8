import { listValues, supportedEfforts } from "../providers/openai-efforts";
import { InvalidRequest } from "./conversation";
import { asArray, isObject, type JsonObject } from "./values";

/**
 * Field limits that Responses and Chat Completions share, refused in OpenAI's own words
 * (`string_above_max_length`, `array_above_max_length`, `decimal_above_max_value` …):
 * docs/vendor-limits.md, rows R4–R20 and C6–C27.
 */

/** Characters of one text, tool output or encrypted content string (R15, C11). */
export const MAX_STRING = 10_485_760;
const MAX_TOOLS = 128;
const MAX_SAFETY_IDENTIFIER = 64;
const MAX_METADATA_PAIRS = 16;
const MAX_METADATA_KEY = 64;
const MAX_METADATA_VALUE = 512;
const EFFORTS = ["none", "minimal", "low", "medium", "high", "xhigh", "max"];

export const tooLong = (param: string, max: number, length: number) =>
  new InvalidRequest(
    `Invalid '${param}': string too long. Expected a string with maximum length ${max}, but got a string with length ${length} instead.`,
    param,
    "string_above_max_length",
  );

export const arrayTooLong = (param: string, max: number, length: number) =>
  new InvalidRequest(
    `Invalid '${param}': array too long. Expected an array with maximum length ${max}, but got an array with length ${length} instead.`,
    param,
    "array_above_max_length",
  );

export const emptyArray = (param: string) =>
  new InvalidRequest(
    `Invalid '${param}': empty array. Expected an array with minimum length 1, but got an empty array instead.`,
    param,
    "empty_array",
  );

export const invalidValue = (value: string, supported: readonly string[], param: string) =>
  new InvalidRequest(`Invalid value: '${value}'. Supported values are: ${listValues(supported)}.`, param, "invalid_value");

/** A string over MAX_STRING characters at `param` is refused. */
export function checkString(value: unknown, param: string, max = MAX_STRING): void {
  if (typeof value === "string" && value.length > max) throw tooLong(param, max, value.length);
}

type Range = { param: string; min: number; max: number; integer?: boolean };

/** Sampling and count settings out of their documented ranges (R4, R5, C20). */
export function checkRanges(body: JsonObject, ranges: Range[]): void {
  for (const { param, min, max, integer } of ranges) {
    const value = body[param];
    if (typeof value !== "number") continue;
    const kind = integer ? "integer" : "decimal";
    const code = integer ? "integer" : "decimal";
    if (value > max) {
      throw new InvalidRequest(
        `Invalid '${param}': ${kind} above maximum value. Expected a value <= ${max}, but got ${value} instead.`,
        param,
        `${code}_above_max_value`,
      );
    }
    if (value < min) {
      throw new InvalidRequest(
        `Invalid '${param}': ${kind} below minimum value. Expected a value >= ${min}, but got ${value} instead.`,
        param,
        `${code}_below_min_value`,
      );
    }
  }
}

/** A reasoning effort that is no effort at all, or one the model does not take (R8, C19). */
export function checkEffort(effort: unknown, model: string, param: string): void {
  if (typeof effort !== "string") return;
  if (!EFFORTS.includes(effort)) throw invalidValue(effort, EFFORTS, param);
  const supported = supportedEfforts(model);
  if (supported === null || supported.includes(effort)) return;
  throw new InvalidRequest(
    `Unsupported value: '${effort}' is not supported with the '${model}' model. Supported values are: ${listValues(supported)}.`,
    param,
    "unsupported_value",
  );
}

/** Tool count, `tool_choice` / `parallel_tool_calls` without tools, `safety_identifier`, `metadata` (R18–R22, C14, C15, C23, C27). */
export function checkRequestFields(body: JsonObject): void {
  const tools = asArray(body.tools);
  if (tools.length > MAX_TOOLS) throw arrayTooLong("tools", MAX_TOOLS, tools.length);
  for (const param of ["tool_choice", "parallel_tool_calls"]) {
    if (body[param] === undefined || body[param] === null || tools.length > 0) continue;
    throw new InvalidRequest(`Invalid value for '${param}': '${param}' is only allowed when 'tools' are specified.`, param);
  }
  checkString(body.safety_identifier, "safety_identifier", MAX_SAFETY_IDENTIFIER);
  if (!isObject(body.metadata)) return;
  const pairs = Object.entries(body.metadata);
  if (pairs.length > MAX_METADATA_PAIRS) {
    throw new InvalidRequest(
      `Invalid 'metadata': too many properties. Expected an object with at most ${MAX_METADATA_PAIRS} properties, but got an object with ${pairs.length} properties instead.`,
      "metadata",
      "object_above_max_properties",
    );
  }
  for (const [key, value] of pairs) {
    if (key.length > MAX_METADATA_KEY) {
      throw new InvalidRequest(
        `Invalid 'metadata': string too long. Expected a key with maximum length ${MAX_METADATA_KEY}, but got a key with length ${key.length} instead.`,
        "metadata",
        "string_above_max_length",
      );
    }
    checkString(value, `metadata.${key}`, MAX_METADATA_VALUE);
  }
}

/** gpt-5.5 and later take only `24h` retention; gpt-5.6 and later take `prompt_cache_options` (R34). */
const RETAINS_24H_ONLY = /^(openai\/)?gpt-(5\.([5-9]|\d{2,})|[6-9])/;
const TAKES_CACHE_OPTIONS = /^(openai\/)?gpt-(5\.([6-9]|\d{2,})|[6-9])/;
const RETENTIONS = ["in_memory", "24h"];
const CACHE_TTLS = ["30m", "12h"];
const CACHE_MODES = ["implicit", "explicit"];

/**
 * The prompt cache settings (docs/vendor-limits.md, R34; the messages follow the API's patterns for
 * unsupported values and parameters, the docs quote none): `prompt_cache_retention` is
 * `in_memory` or `24h`, only `24h` from gpt-5.5 on; `prompt_cache_options` exists from gpt-5.6 on,
 * with `ttl` `30m` or `12h`.
 */
export function checkPromptCache(body: JsonObject, model: string): void {
  const retention = body.prompt_cache_retention;
  if (typeof retention === "string") {
    if (!RETENTIONS.includes(retention)) throw invalidValue(retention, RETENTIONS, "prompt_cache_retention");
    if (retention !== "24h" && RETAINS_24H_ONLY.test(model)) {
      throw new InvalidRequest(
        `Unsupported value: '${retention}' is not supported with the '${model}' model. Supported values are: '24h'.`,
        "prompt_cache_retention",
        "unsupported_value",
      );
    }
  }
  const options = body.prompt_cache_options;
  if (options === undefined || options === null) return;
  if (!TAKES_CACHE_OPTIONS.test(model)) {
    throw new InvalidRequest(
      "Unsupported parameter: 'prompt_cache_options' is not supported with this model.",
      "prompt_cache_options",
      "unsupported_parameter",
    );
  }
  if (!isObject(options)) return;
  if (options.mode !== undefined && !CACHE_MODES.includes(String(options.mode)))
    throw invalidValue(String(options.mode), CACHE_MODES, "prompt_cache_options.mode");
  if (options.ttl !== undefined && !CACHE_TTLS.includes(String(options.ttl)))
    throw invalidValue(String(options.ttl), CACHE_TTLS, "prompt_cache_options.ttl");
}
