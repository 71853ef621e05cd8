import fc from "fast-check";
import type { JsonSchema } from "./routes";

const JSON_TYPES = ["string", "number", "integer", "boolean", "null", "array", "object"] as const;
type JsonType = (typeof JSON_TYPES)[number];

/** The JSON types a schema accepts, or null when it accepts anything (no type to violate). */
export function acceptedTypes(schema: JsonSchema): Set<JsonType> | null {
  const union = schema.anyOf ?? schema.oneOf;
  if (union) {
    const all = new Set<JsonType>();
    for (const member of union) {
      const types = acceptedTypes(member);
      if (!types) return null;
      types.forEach((t) => {
        all.add(t);
      });
    }
    return all;
  }
  if (schema.allOf?.length) return acceptedTypes(schema.allOf[0]!);
  const values = schema.enum ?? (schema.const !== undefined ? [schema.const] : undefined);
  if (values) return new Set(values.map(jsonTypeOf));
  if (schema.type === undefined) return null;
  const types = new Set((Array.isArray(schema.type) ? schema.type : [schema.type]) as JsonType[]);
  if (types.has("number")) types.add("integer");
  return types;
}

function jsonTypeOf(value: unknown): JsonType {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value as JsonType;
}

const anyOfType: Record<JsonType, fc.Arbitrary<unknown>> = {
  string: fc.string(),
  number: fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Number.isInteger(n)),
  integer: fc.integer(),
  boolean: fc.boolean(),
  null: fc.constant(null),
  array: fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 }),
  object: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
};

/**
 * Values a JSON body field with `schema` must refuse: any value of a JSON type it does not accept,
 * and for a closed set of strings (an enum), a string outside it. Null when nothing is sure to be refused.
 */
export function invalidJsonValue(schema: JsonSchema): fc.Arbitrary<unknown> | null {
  const accepted = acceptedTypes(schema);
  if (!accepted) return null;
  const options: fc.Arbitrary<unknown>[] = JSON_TYPES.filter((t) => !accepted.has(t)).map((t) => anyOfType[t]);
  const closed = schema.enum ?? (schema.const !== undefined ? [schema.const] : undefined);
  if (closed && accepted.has("string")) options.push(fc.string().filter((s) => !closed.includes(s)));
  return options.length > 0 ? fc.oneof(...options) : null;
}

/**
 * Values a query parameter with `schema` must refuse (query values are strings): words for
 * numbers, anything but true/false for booleans, strings outside an enum. Null when any string may be valid.
 */
export function invalidQueryValue(schema: JsonSchema): fc.Arbitrary<string> | null {
  const accepted = acceptedTypes(schema);
  if (!accepted) return null;
  const closed = schema.enum ?? (schema.const !== undefined ? [schema.const] : undefined);
  if (closed) return fc.string({ minLength: 1 }).filter((s) => !closed.map(String).includes(s));
  if (accepted.has("string")) return null;
  const word = fc.string({ minLength: 1 }).filter((s) => Number.isNaN(Number(s)) && s !== "true" && s !== "false");
  if (accepted.has("integer") && !accepted.has("number")) return fc.oneof(word, fc.constantFrom("1.5", "-0.25", "1e400"));
  return word;
}
