import { STRICT_SCHEMA_LIMITS } from "../providers/openai-limits";
import { InvalidRequest } from "./conversation";
import { asArray, isObject, type JsonObject } from "./values";

/**
 * OpenAI's structured-output rules for a schema sent with `strict: true` (docs/vendor-limits.md,
 * R23–R27 and C24): the root an object, every object closed with all of its properties
 * required, at most 10 levels of nesting, 5000 properties and 1000 enum values, and 120,000
 * characters of property names, definition names, enum and const values (15,000 for the values
 * of one string enum of more than 250 values).
 */

const {
  depth: MAX_DEPTH,
  properties: MAX_PROPERTIES,
  enumValues: MAX_ENUM_VALUES,
  chars: MAX_STRING_CHARS,
  largeEnum: LARGE_ENUM,
  largeEnumChars: MAX_LARGE_ENUM_CHARS,
} = STRICT_SCHEMA_LIMITS;

/** Where a schema was sent: `response_format 'output'` or `function 'glob'`, with its param and code. */
export type SchemaPlace = { label: string; param: string; code: string };

type Stats = { depth: number; properties: number; enums: number; chars: number };

/** Throws OpenAI's refusal of a strict schema outside its subset. */
export function checkStrictSchema(schema: unknown, place: SchemaPlace): void {
  const refuse = (why: string) => new InvalidRequest(`Invalid schema for ${place.label}: ${why}`, place.param, place.code);
  const root = isObject(schema) ? schema : {};
  if (root.type !== "object" || "anyOf" in root) {
    const type = typeof root.type === "string" ? root.type : "None";
    throw refuse(`schema must be a JSON Schema of 'type: "object"', got 'type: "${type}"'.`);
  }
  const stats: Stats = { depth: 0, properties: 0, enums: 0, chars: 0 };
  walk(root, [], 1, stats, refuse);
  if (stats.depth > MAX_DEPTH) throw refuse(`${stats.depth} levels of nesting exceeds limit of ${MAX_DEPTH}.`);
  if (stats.properties > MAX_PROPERTIES) throw refuse(`${stats.properties} parameters exceeds limit of ${MAX_PROPERTIES}.`);
  if (stats.enums > MAX_ENUM_VALUES) {
    throw refuse(
      `Expected at most ${MAX_ENUM_VALUES} enum values in total within a single schema when using structured outputs, but received ${stats.enums}. Consider reducing the number of enums, or use 'strict: false' to opt out of structured outputs.`,
    );
  }
  if (stats.chars > MAX_STRING_CHARS) {
    throw refuse(
      `Expected at most ${MAX_STRING_CHARS} total characters in property names, definition names, enum values and const values within a single schema when using structured outputs, but received ${stats.chars}. Consider reducing their length, or use 'strict: false' to opt out of structured outputs.`,
    );
  }
}

/** `()`, `('items',)`, `('properties', 'y')`: the path as OpenAI prints it (a Python tuple). */
const context = (path: (string | number)[]) => {
  const parts = path.map((part) => (typeof part === "number" ? String(part) : `'${part}'`));
  return parts.length === 1 ? `(${parts[0]},)` : `(${parts.join(", ")})`;
};

function walk(node: unknown, path: (string | number)[], depth: number, stats: Stats, refuse: (why: string) => InvalidRequest): void {
  if (!isObject(node)) return;
  stats.depth = Math.max(stats.depth, depth);
  countValues(node, path, stats, refuse);
  const types = Array.isArray(node.type) ? node.type : [node.type];
  if (types.includes("object") || "properties" in node) {
    const properties = isObject(node.properties) ? node.properties : {};
    const keys = Object.keys(properties);
    if (node.additionalProperties !== false) {
      throw refuse(`In context=${context(path)}, 'additionalProperties' is required to be supplied and to be false.`);
    }
    const required = asArray(node.required);
    const missing = keys.find((key) => !required.includes(key));
    if (missing !== undefined) {
      throw refuse(
        `In context=${context(path)}, 'required' is required to be supplied and to be an array including every key in properties. Missing '${missing}'.`,
      );
    }
    stats.properties += keys.length;
    stats.chars += keys.reduce((sum, key) => sum + key.length, 0);
    for (const key of keys) walk(properties[key], [...path, "properties", key], depth + 1, stats, refuse);
  }
  if ("items" in node) walk(node.items, [...path, "items"], depth + 1, stats, refuse);
  asArray(node.anyOf).forEach((branch, index) => {
    walk(branch, [...path, "anyOf", index], depth + 1, stats, refuse);
  });
  for (const key of ["$defs", "definitions"]) {
    const defs = node[key];
    if (!isObject(defs)) continue;
    for (const [name, def] of Object.entries(defs)) {
      stats.chars += name.length;
      walk(def, [...path, key, name], depth, stats, refuse);
    }
  }
}

/** Enum and const values: their count, and their characters. */
function countValues(node: JsonObject, path: (string | number)[], stats: Stats, refuse: (why: string) => InvalidRequest): void {
  const values = asArray(node.enum);
  stats.enums += values.length;
  const strings = values.filter((value): value is string => typeof value === "string");
  const chars = strings.reduce((sum, value) => sum + value.length, 0);
  if (strings.length > LARGE_ENUM && chars > MAX_LARGE_ENUM_CHARS) {
    throw refuse(
      `In context=${context(path)}, Expected at most ${MAX_LARGE_ENUM_CHARS} total characters in enum values for a string enum with more than ${LARGE_ENUM} values when using structured outputs, but received ${chars}.`,
    );
  }
  stats.chars += chars + (typeof node.const === "string" ? node.const.length : 0);
}
