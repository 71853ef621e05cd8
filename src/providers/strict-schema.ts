import { STRICT_SCHEMA_LIMITS } from "./openai-limits";
/**
 * OpenAI's strict structured outputs guarantee the schema, but only for a subset of JSON
 * Schema: every object closed (`additionalProperties: false`) with all of its properties
 * required, a short list of keywords, at most 10 levels of nesting, 5000 properties, 1000 enum
 * values and 120,000 characters of property names, definition names, enum and const values
 * (15,000 for the values of one string enum of more than 250 values). A schema outside that
 * subset sent with `strict: true` is a 400, so it goes out with `strict: false` (best effort)
 * and Agentry's own validation and repair do the rest (docs/vendor-limits.md, R23–R27).
 */

const KEYWORDS = new Set([
  "type",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "enum",
  "anyOf",
  "$ref",
  "$defs",
  "definitions",
  "description",
  "title",
  "pattern",
  "format",
  "multipleOf",
  "maximum",
  "exclusiveMaximum",
  "minimum",
  "exclusiveMinimum",
  "minItems",
  "maxItems",
]);

const FORMATS = new Set(["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"]);

const {
  depth: MAX_DEPTH,
  properties: MAX_PROPERTIES,
  enumValues: MAX_ENUM_VALUES,
  chars: MAX_STRING_CHARS,
  largeEnum: LARGE_ENUM,
  largeEnumChars: MAX_LARGE_ENUM_CHARS,
} = STRICT_SCHEMA_LIMITS;

/** What is left of the whole schema's limits while it is walked. */
type Budget = { properties: number; enums: number; chars: number };

/** True when `schema` is inside the subset OpenAI accepts with `strict: true`. */
export function isStrictSchema(schema: Record<string, unknown>): boolean {
  if (schema.type !== "object" || "anyOf" in schema) return false;
  const budget: Budget = { properties: MAX_PROPERTIES, enums: MAX_ENUM_VALUES, chars: MAX_STRING_CHARS };
  return strictNode(schema, 1, budget);
}

/** Spends a node's enum and const values from the budget; false when one runs out. */
function spendValues(node: Record<string, unknown>, budget: Budget): boolean {
  const values = Array.isArray(node.enum) ? node.enum : [];
  const strings = values.filter((value): value is string => typeof value === "string");
  const chars = strings.reduce((sum, value) => sum + value.length, 0);
  if (strings.length > LARGE_ENUM && chars > MAX_LARGE_ENUM_CHARS) return false;
  budget.enums -= values.length;
  budget.chars -= chars + (typeof node.const === "string" ? node.const.length : 0);
  return budget.enums >= 0 && budget.chars >= 0;
}

function strictNode(node: unknown, depth: number, budget: Budget): boolean {
  if (!isRecord(node) || depth > MAX_DEPTH) return false;
  for (const key of Object.keys(node)) if (!KEYWORDS.has(key)) return false;
  if (!spendValues(node, budget)) return false;
  if (typeof node.format === "string" && !FORMATS.has(node.format)) return false;
  const types = Array.isArray(node.type) ? node.type : [node.type];
  if (types.includes("object") || "properties" in node) {
    const properties = isRecord(node.properties) ? node.properties : {};
    const keys = Object.keys(properties);
    const required = new Set(Array.isArray(node.required) ? node.required : []);
    if (node.additionalProperties !== false || keys.some((key) => !required.has(key))) return false;
    budget.properties -= keys.length;
    budget.chars -= keys.reduce((sum, key) => sum + key.length, 0);
    if (budget.properties < 0 || budget.chars < 0) return false;
    if (!Object.values(properties).every((child) => strictNode(child, depth + 1, budget))) return false;
  }
  if ("items" in node && !strictNode(node.items, depth + 1, budget)) return false;
  if ("anyOf" in node && !(Array.isArray(node.anyOf) && node.anyOf.every((branch) => strictNode(branch, depth + 1, budget)))) {
    return false;
  }
  for (const defs of [node.$defs, node.definitions]) {
    if (defs === undefined) continue;
    if (!isRecord(defs)) return false;
    budget.chars -= Object.keys(defs).reduce((sum, name) => sum + name.length, 0);
    if (!Object.values(defs).every((def) => strictNode(def, depth, budget))) return false;
  }
  return true;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
