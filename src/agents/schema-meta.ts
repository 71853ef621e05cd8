import { Validator, type Schema } from "@cfworker/json-schema";

const TYPES = ["null", "boolean", "object", "array", "number", "string", "integer"];
const subschema = { $ref: "#" };
const subschemas = { type: "array", minItems: 1, items: subschema };
const schemaMap = { type: "object", additionalProperties: subschema };
const count = { type: "integer", minimum: 0 };

/**
 * What JSON Schema (draft 2020-12, and the older drafts' `definitions`) says each keyword's value
 * must be, as a schema of schemas: the rules of the official metaschema that a tool's parameters
 * or an output schema can break. Unknown keywords pass, as the metaschema lets them.
 */
const META = {
  type: ["object", "boolean"],
  properties: {
    type: { anyOf: [{ enum: TYPES }, { type: "array", minItems: 1, uniqueItems: true, items: { enum: TYPES } }] },
    properties: schemaMap,
    patternProperties: schemaMap,
    additionalProperties: subschema,
    unevaluatedProperties: subschema,
    propertyNames: subschema,
    dependentSchemas: schemaMap,
    items: subschema,
    prefixItems: subschemas,
    contains: subschema,
    unevaluatedItems: subschema,
    allOf: subschemas,
    anyOf: subschemas,
    oneOf: subschemas,
    not: subschema,
    if: subschema,
    then: subschema,
    else: subschema,
    $defs: schemaMap,
    definitions: schemaMap,
    $ref: { type: "string" },
    $id: { type: "string" },
    $schema: { type: "string" },
    $anchor: { type: "string" },
    title: { type: "string" },
    description: { type: "string" },
    format: { type: "string" },
    pattern: { type: "string" },
    required: { type: "array", uniqueItems: true, items: { type: "string" } },
    dependentRequired: { type: "object", additionalProperties: { type: "array", uniqueItems: true, items: { type: "string" } } },
    enum: { type: "array" },
    multipleOf: { type: "number", exclusiveMinimum: 0 },
    maximum: { type: "number" },
    exclusiveMaximum: { type: "number" },
    minimum: { type: "number" },
    exclusiveMinimum: { type: "number" },
    maxLength: count,
    minLength: count,
    maxItems: count,
    minItems: count,
    maxContains: count,
    minContains: count,
    maxProperties: count,
    minProperties: count,
    uniqueItems: { type: "boolean" },
    readOnly: { type: "boolean" },
    writeOnly: { type: "boolean" },
    deprecated: { type: "boolean" },
    examples: { type: "array" },
  },
};

// The validator's `Schema` type lists keyword value types narrowly; META is a plain JSON Schema.
const metaValidator = new Validator(META as unknown as Schema, "2020-12", false);

/**
 * The first way `schema` is not a valid JSON Schema, as `path: reason` below `where` (a
 * `parameters` whose `required` is a string, a `type` that names no type …), or null. Anthropic
 * refuses a tool whose `input_schema` is not valid JSON Schema, and every later run of the agent
 * with it, so this is checked before the agent or the run is stored.
 */
export function metaschemaProblem(schema: unknown): { path: string; message: string } | null {
  const result = metaValidator.validate(schema);
  if (result.valid) return null;
  // The deepest error names the keyword at fault; the ones above it only say "a subschema failed".
  const deepest = [...result.errors].sort((a, b) => b.instanceLocation.length - a.instanceLocation.length)[0];
  if (!deepest) return { path: "", message: "is not a valid JSON Schema" };
  const path = deepest.instanceLocation.replace(/^#\/?/, "").split("/").filter(Boolean).join(".");
  return { path, message: `is not valid JSON Schema (${deepest.error})` };
}
