import { transformJSONSchema } from "@anthropic-ai/sdk/lib/transform-json-schema";
import type { JSONOutputFormat } from "@anthropic-ai/sdk/resources/messages";
import { ProviderError } from "./types";

/**
 * Claude models released before structured outputs (`output_config.format`): the 3.x family,
 * Claude Sonnet 4 and Opus 4 / 4.1. Every other name, later models included, is sent the native
 * format; Anthropic lists Sonnet 4.5, Opus 4.5, Haiku 4.5, Sonnet 4.6, Opus 4.6 and later.
 */
const WITHOUT_STRUCTURED_OUTPUT = [
  /^claude-(instant|2)/,
  /^claude-3/,
  /^claude-(sonnet|opus)-4(-0)?(-\d{8})?$/,
  /^claude-opus-4-1(-\d{8})?$/,
];

/** Whether `model` takes `output_config.format` (a deny-list of older models, so new names work). */
export const supportsStructuredOutput = (model: string): boolean => !WITHOUT_STRUCTURED_OUTPUT.some((pattern) => pattern.test(model));

/**
 * The user's output schema as Anthropic's structured outputs accept it, through the SDK's own
 * transform (the one `jsonSchemaOutputFormat` applies): objects closed with
 * `additionalProperties: false`, keywords outside the supported subset (`minimum`, `maxLength`,
 * `minItems` above 1, unsupported `format`s …) moved into the `description` as hints. The answer
 * is still validated against the user's full schema afterwards. A model that predates structured
 * outputs gets a permanent error saying so, before any request is sent.
 */
export function anthropicOutputFormat(model: string, schema: Record<string, unknown>): JSONOutputFormat {
  if (!supportsStructuredOutput(model)) {
    throw new ProviderError(
      "provider_error",
      `${model} does not support structured output (output_config.format); use Claude Sonnet 4.5, Opus 4.5, Haiku 4.5 or a later model, or remove the output_schema`,
      false,
    );
  }
  return { type: "json_schema", schema: anthropicSchema(schema) };
}

/**
 * The SDK's transform throws on a subschema without a `type` (and without `$ref`, `anyOf`,
 * `oneOf`, `allOf`, `enum` or `const`): a user's "any value" (`{}`). Such subschemas go out as
 * `{ "type": "string" }`, a value the user's schema accepts too, so the constrained answer still
 * passes the validation against the full schema afterwards.
 */
export function anthropicSchema(schema: Record<string, unknown>): Record<string, unknown> {
  try {
    return transformJSONSchema(schema);
  } catch {
    return transformJSONSchema(withTypes(schema));
  }
}

const TYPED_BY = ["type", "$ref", "anyOf", "oneOf", "allOf", "enum", "const"];

function withTypes(value: unknown): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { type: "string" };
  const schema: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const key of ["properties", "$defs"]) {
    const children = schema[key];
    if (typeof children === "object" && children !== null && !Array.isArray(children)) {
      schema[key] = Object.fromEntries(Object.entries(children).map(([name, child]) => [name, withTypes(child)]));
    }
  }
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    if (Array.isArray(schema[key])) schema[key] = (schema[key] as unknown[]).map(withTypes);
  }
  if (schema.items !== undefined && !Array.isArray(schema.items)) schema.items = withTypes(schema.items);
  if (!TYPED_BY.some((key) => key in schema)) schema.type = "string";
  return schema;
}
