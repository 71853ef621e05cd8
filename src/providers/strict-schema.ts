/**
 * OpenAI's strict structured outputs guarantee the schema, but only for a subset of JSON
 * Schema: every object closed (`additionalProperties: false`) with all of its properties
 * required, a short list of keywords, at most 10 levels of nesting and 5000 properties. A
 * schema outside that subset sent with `strict: true` is a 400, so it goes out with
 * `strict: false` (best effort) and Agentry's own validation and repair do the rest.
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

const MAX_DEPTH = 10;
const MAX_PROPERTIES = 5000;

/** True when `schema` is inside the subset OpenAI accepts with `strict: true`. */
export function isStrictSchema(schema: Record<string, unknown>): boolean {
  if (schema.type !== "object" || "anyOf" in schema) return false;
  const budget = { properties: MAX_PROPERTIES };
  return strictNode(schema, 1, budget);
}

function strictNode(node: unknown, depth: number, budget: { properties: number }): boolean {
  if (!isRecord(node) || depth > MAX_DEPTH) return false;
  for (const key of Object.keys(node)) if (!KEYWORDS.has(key)) return false;
  if (typeof node.format === "string" && !FORMATS.has(node.format)) return false;
  const types = Array.isArray(node.type) ? node.type : [node.type];
  if (types.includes("object") || "properties" in node) {
    const properties = isRecord(node.properties) ? node.properties : {};
    const keys = Object.keys(properties);
    const required = new Set(Array.isArray(node.required) ? node.required : []);
    if (node.additionalProperties !== false || keys.some((key) => !required.has(key))) return false;
    budget.properties -= keys.length;
    if (budget.properties < 0) return false;
    if (!Object.values(properties).every((child) => strictNode(child, depth + 1, budget))) return false;
  }
  if ("items" in node && !strictNode(node.items, depth + 1, budget)) return false;
  if ("anyOf" in node && !(Array.isArray(node.anyOf) && node.anyOf.every((branch) => strictNode(branch, depth + 1, budget)))) {
    return false;
  }
  for (const defs of [node.$defs, node.definitions]) {
    if (defs === undefined) continue;
    if (!isRecord(defs) || !Object.values(defs).every((def) => strictNode(def, depth, budget))) return false;
  }
  return true;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
