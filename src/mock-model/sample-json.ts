import { asArray, isObject, type JsonObject } from "./values";

const MAX_DEPTH = 12;

const FORMATS: Record<string, string> = {
  "date-time": "2026-01-01T00:00:00Z",
  date: "2026-01-01",
  time: "00:00:00Z",
  duration: "P1D",
  email: "sample@example.com",
  hostname: "example.com",
  ipv4: "192.0.2.1",
  ipv6: "2001:db8::1",
  uri: "https://example.com/",
  url: "https://example.com/",
  uuid: "00000000-0000-4000-8000-000000000000",
};

/** Follows a local `$ref` (`#`, `#/$defs/…`, `#/definitions/…`); other refs resolve to `{}`. */
function resolve(schema: JsonObject, root: JsonObject): JsonObject {
  const ref = schema.$ref;
  if (typeof ref !== "string" || !ref.startsWith("#")) return schema;
  let node: unknown = root;
  for (const part of ref.slice(1).split("/").filter(Boolean)) {
    const key = decodeURIComponent(part).replace(/~1/g, "/").replace(/~0/g, "~");
    node = isObject(node) ? node[key] : undefined;
  }
  return isObject(node) ? node : {};
}

/** The first type a schema allows, preferring anything over `null`. */
export function typeOf(schema: JsonObject): string | undefined {
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  const named = types.filter((type): type is string => typeof type === "string");
  const type = named.find((t) => t !== "null") ?? named[0];
  if (type !== undefined) return type;
  if (isObject(schema.properties) || Array.isArray(schema.required)) return "object";
  if (schema.items !== undefined || schema.prefixItems !== undefined) return "array";
  return undefined;
}

/** A value valid for `schema`: const, first enum value, first `anyOf`/`oneOf` branch, every property. */
export function sampleValue(schema: unknown, root: unknown = schema, depth = 0): unknown {
  if (!isObject(schema) || depth > MAX_DEPTH) return schema === false ? undefined : "sample";
  const rootObject = isObject(root) ? root : schema;
  const node = resolve(schema, rootObject);
  if (node !== schema) return sampleValue(node, rootObject, depth + 1);
  if ("const" in node) return node.const;
  if (Array.isArray(node.enum) && node.enum.length > 0) return node.enum[0];
  const branches = asArray(node.anyOf ?? node.oneOf).filter(isObject);
  const branch = branches.find((b) => typeOf(resolve(b, rootObject)) !== "null") ?? branches[0];
  if (branch) return sampleValue(branch, rootObject, depth + 1);
  if (Array.isArray(node.allOf)) return sampleValue(mergeAll(node), rootObject, depth + 1);

  switch (typeOf(node)) {
    case "object":
      return sampleObject(node, rootObject, depth);
    case "array": {
      const prefix = asArray(node.prefixItems);
      if (prefix.length > 0) return prefix.map((item) => sampleValue(item, rootObject, depth + 1));
      const count = node.maxItems === 0 ? 0 : Math.max(1, num(node.minItems) ?? 1);
      return Array.from({ length: count }, () => sampleValue(node.items ?? {}, rootObject, depth + 1));
    }
    case "string":
      return sampleString(node);
    case "integer":
    case "number":
      return sampleNumber(node, typeOf(node) === "integer");
    case "boolean":
      return true;
    case "null":
      return null;
    default:
      return "sample";
  }
}

function sampleObject(node: JsonObject, root: JsonObject, depth: number): JsonObject {
  const value: JsonObject = {};
  const properties = isObject(node.properties) ? node.properties : {};
  for (const [key, property] of Object.entries(properties)) {
    const sample = sampleValue(property, root, depth + 1);
    if (sample !== undefined) value[key] = sample;
  }
  for (const key of asArray(node.required)) {
    if (typeof key === "string" && !(key in value)) value[key] = "sample";
  }
  return value;
}

function sampleString(node: JsonObject): string {
  const format = typeof node.format === "string" ? FORMATS[node.format] : undefined;
  let text = format ?? "sample";
  const min = num(node.minLength);
  const max = num(node.maxLength);
  if (min !== undefined && text.length < min) text = text.padEnd(min, "x");
  if (max !== undefined && text.length > max) text = text.slice(0, max);
  return text;
}

function sampleNumber(node: JsonObject, integer: boolean): number {
  let value = 1;
  const min = num(node.minimum);
  const exclusiveMin = num(node.exclusiveMinimum);
  const max = num(node.maximum);
  const exclusiveMax = num(node.exclusiveMaximum);
  if (min !== undefined) value = Math.max(value, min);
  if (exclusiveMin !== undefined && value <= exclusiveMin) value = exclusiveMin + 1;
  if (max !== undefined && value > max) value = max;
  if (exclusiveMax !== undefined && value >= exclusiveMax) value = exclusiveMax - (integer ? 1 : 0.5);
  if (integer) value = Math.ceil(value);
  const step = num(node.multipleOf);
  if (step !== undefined && step > 0) value = Math.ceil(value / step) * step;
  return value;
}

/** Merges `allOf` branches into one schema (properties and `required` combined). */
function mergeAll(node: JsonObject): JsonObject {
  const { allOf, ...rest } = node;
  const properties: JsonObject = { ...(isObject(rest.properties) ? rest.properties : {}) };
  const required = new Set(asArray(rest.required));
  const merged: JsonObject = { ...rest };
  for (const part of asArray(allOf).filter(isObject)) {
    const { properties: partProperties, required: partRequired, ...other } = part;
    Object.assign(merged, other);
    Object.assign(properties, isObject(partProperties) ? partProperties : {});
    for (const key of asArray(partRequired)) required.add(key);
  }
  return { ...merged, properties, required: [...required] };
}

const num = (value: unknown): number | undefined => (typeof value === "number" ? value : undefined);
