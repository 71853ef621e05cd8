import { errorMessage } from "../core/errors";
import { Validator, type OutputUnit, type Schema, type SchemaDraft } from "@cfworker/json-schema";
import { jsonDepthExcess, MAX_JSON_DEPTH } from "../core/json-depth";
import { metaschemaProblem } from "./schema-meta";

/** One way an answer misses its output schema: a dotted path into the answer ("" is the whole answer). */
export type OutputError = { path: string; message: string };

/** The verdict on an answer's text: the parsed value, or why it does not fit. */
export type OutputCheck = { ok: true; value: unknown } | { ok: false; errors: OutputError[] };

/** At most this many errors are reported (to the model on a repair, and in `run.error.errors`). */
export const MAX_OUTPUT_ERRORS = 20;

/**
 * Errors that only say "something below me failed": dropped when the failure below is reported.
 * `@cfworker/json-schema` lists such a summary before the errors it sums up.
 */
const SUMMARIES = new Set([
  "$ref",
  "$recursiveRef",
  "properties",
  "patternProperties",
  "additionalProperties",
  "unevaluatedProperties",
  "prefixItems",
  "items",
  "additionalItems",
  "unevaluatedItems",
]);

/** The JSON Schema draft a schema names in `$schema`; 2020-12 (what the providers use) otherwise. */
export function draftOf(schema: Record<string, unknown>): SchemaDraft {
  const named = typeof schema.$schema === "string" ? schema.$schema : "";
  if (named.includes("draft-04")) return "4";
  if (named.includes("draft-06") || named.includes("draft-07")) return "7";
  if (named.includes("2019-09")) return "2019-09";
  return "2020-12";
}

/**
 * Checks a final answer against an output schema: its text must be JSON (a single fenced
 * ```json block is accepted too) and the value valid for the schema. Never throws: a schema the
 * validator cannot apply is reported as an error of the answer.
 */
export function checkOutput(text: string, schema: Record<string, unknown>): OutputCheck {
  let value: unknown;
  const json = unfenced(text);
  if (jsonDepthExcess(json) !== null) {
    return { ok: false, errors: [{ path: "", message: `The answer nests deeper than ${MAX_JSON_DEPTH} levels.` }] };
  }
  try {
    value = JSON.parse(json);
  } catch (error) {
    return { ok: false, errors: [{ path: "", message: `The answer is not valid JSON (${messageOf(error)}).` }] };
  }
  try {
    // The validator's `Schema` type lists keywords; it accepts any JSON object as a schema.
    const result = new Validator(schema as Schema, draftOf(schema), false).validate(value);
    return result.valid ? { ok: true, value } : { ok: false, errors: readable(result.errors) };
  } catch (error) {
    return { ok: false, errors: [{ path: "", message: `The output schema could not be applied: ${messageOf(error)}` }] };
  }
}

/** The errors as lines of text, for a repair request and for `run.error.message`. */
export function describeErrors(errors: OutputError[]): string {
  return errors.map((e) => `- ${e.path === "" ? "(root)" : e.path}: ${e.message}`).join("\n");
}

/**
 * Why a schema cannot be used, found before any answer is checked or any model is called: it is
 * not valid JSON Schema (schema-meta.ts), a `pattern` (or `patternProperties` key) is not a
 * valid regular expression, or a local `$ref` points nowhere. Null when none.
 */
export function schemaProblem(schema: Record<string, unknown>): string | null {
  const invalid = metaschemaProblem(schema);
  if (invalid) return invalid.path === "" ? invalid.message : `${invalid.path} ${invalid.message}`;
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const node = stack.pop();
    if (Array.isArray(node)) {
      stack.push(...node);
      continue;
    }
    if (!isRecord(node)) continue;
    for (const [key, value] of Object.entries(node)) {
      // Values, not schemas: a `pattern` key inside them means nothing.
      if (key === "const" || key === "enum" || key === "default" || key === "examples") continue;
      if (key === "pattern" && typeof value === "string") {
        const problem = regexProblem(value);
        if (problem) return `pattern ${JSON.stringify(value)} is not a valid regular expression: ${problem}`;
      }
      if (key === "patternProperties" && isRecord(value)) {
        for (const pattern of Object.keys(value)) {
          const problem = regexProblem(pattern);
          if (problem) return `patternProperties key ${JSON.stringify(pattern)} is not a valid regular expression: ${problem}`;
        }
      }
      if (key === "$ref" && typeof value === "string" && value.startsWith("#/") && resolvePointer(schema, value) === undefined) {
        return `$ref ${JSON.stringify(value)} points to nothing in the schema`;
      }
      if (typeof value === "object" && value !== null) stack.push(value);
    }
  }
  return null;
}

function readable(units: OutputUnit[]): OutputError[] {
  const below = (unit: OutputUnit) =>
    units.some(
      (other) =>
        other !== unit &&
        !SUMMARIES.has(other.keyword) &&
        (other.instanceLocation === unit.instanceLocation || other.instanceLocation.startsWith(`${unit.instanceLocation}/`)),
    );
  const errors: OutputError[] = [];
  const seen = new Set<string>();
  for (const unit of units) {
    if (SUMMARIES.has(unit.keyword) && below(unit)) continue;
    const error = {
      path: pathOf(unit.instanceLocation),
      // A `false` schema (e.g. `additionalProperties: false`) says only "False boolean schema."
      message: unit.keyword === "false" ? "This value is not allowed by the schema." : unit.error,
    };
    const key = `${error.path}\n${error.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    errors.push(error);
    if (errors.length === MAX_OUTPUT_ERRORS) break;
  }
  return errors;
}

/** `#/items/0/name` → `items.0.name`; `#` → "". */
function pathOf(instanceLocation: string): string {
  return instanceLocation
    .replace(/^#\/?/, "")
    .split("/")
    .filter((part) => part !== "")
    .map((part) => {
      let decoded = part;
      try {
        decoded = decodeURIComponent(part);
      } catch {
        // Keep the part as the validator wrote it.
      }
      return decoded.replace(/~1/g, "/").replace(/~0/g, "~");
    })
    .join(".");
}

function unfenced(text: string): string {
  const fenced = /^\s*```(?:json)?[ \t]*\r?\n([\s\S]*?)\r?\n?[ \t]*```\s*$/i.exec(text);
  return fenced?.[1] ?? text;
}

function resolvePointer(root: unknown, ref: string): unknown {
  let node: unknown = root;
  for (const part of ref.slice(2).split("/")) {
    let key = part;
    try {
      key = decodeURIComponent(part);
    } catch {
      // Not percent-encoded after all.
    }
    key = key.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(node)) node = node[Number(key)];
    else if (isRecord(node)) node = node[key];
    else return undefined;
  }
  return node;
}

function regexProblem(pattern: string): string | null {
  try {
    new RegExp(pattern, "u");
    return null;
  } catch (error) {
    return messageOf(error);
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

const messageOf = (error: unknown) => errorMessage(error);
