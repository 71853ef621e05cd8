/**
 * The Open Responses specification's Response object and streaming events, as JSON Schema
 * (2020-12) checked with `@cfworker/json-schema`. Written from the spec's OpenAPI document and
 * prose (openresponses.org, "Specification"; the `ResponseResource` and `*StreamingEvent`
 * components), not generated from it:
 *
 * - Every field the spec lists as `required` is required here, with its type and nullability
 *   ("required" and "nullable" are separate: `completed_at: null` is valid, a missing
 *   `completed_at` is not).
 * - Unions are discriminated by `type`; an unknown `type` is an error unless it carries an
 *   implementor prefix (`acme:…`), which the spec allows for extension items and events.
 * - Extra fields are allowed everywhere (the spec lets implementors extend its schemas).
 * - Where the spec's versions differ, the stricter reading is kept and noted: `logprobs` is
 *   required on `output_text` parts and on `response.output_text.delta` / `.done` (the
 *   generated validators the compliance suite runs require it, as OpenAI's API does; the newest
 *   OpenAPI document lists it as optional). An empty array satisfies every version.
 */
import { Validator, type OutputUnit, type Schema } from "@cfworker/json-schema";
import { expect } from "vitest";

const ref = (name: string): Schema => ({ $ref: `#/$defs/${name}` });
/** `null`, or an object that matches `$defs[name]` (written without `anyOf`, so the object's own errors show). */
const nullableRef = (name: string): Schema => ({ type: ["object", "null"], if: { type: "object" }, then: ref(name) });
const int: Schema = { type: "integer" };
const str: Schema = { type: "string" };
const num: Schema = { type: "number" };
const bool: Schema = { type: "boolean" };
const nullableInt: Schema = { type: ["integer", "null"] };
const nullableStr: Schema = { type: ["string", "null"] };

/** An object schema: `required` lists the fields that must be present (null or not, per their schema). */
const object = (properties: Record<string, Schema>, required: string[] = Object.keys(properties)): Schema => ({
  type: "object",
  required,
  properties,
});

/** Like `object`, but `null` is allowed too (`required`/`properties` only apply to objects). */
const nullableObject = (properties: Record<string, Schema>, required: string[] = Object.keys(properties)): Schema => ({
  ...object(properties, required),
  type: ["object", "null"],
});

/** An extension type: the implementor's slug, a colon, its own name (`acme:search_result`). */
const EXTENSION_TYPE: Schema = { type: "string", pattern: "^[A-Za-z0-9_.-]+:" };

/**
 * A union discriminated by `type`: the value's `type` must be one of `variants` (or carry an
 * implementor prefix, when `extensible`), and the value must match that variant's schema.
 */
function byType(variants: Record<string, Schema>, extensible: boolean): Schema {
  const names = Object.keys(variants);
  const typeSchema: Schema = extensible ? { anyOf: [{ enum: names }, EXTENSION_TYPE] } : { enum: names };
  return {
    type: "object",
    required: ["type"],
    properties: { type: typeSchema },
    allOf: names.map((name) => ({
      if: { type: "object", required: ["type"], properties: { type: { const: name } } },
      then: variants[name] as Schema,
    })),
  };
}

const ITEM_STATUS = ["in_progress", "completed", "incomplete"];

// Content parts ------------------------------------------------------------------------------

const topLogProb = object({ token: str, logprob: num, bytes: { type: "array", items: int } });
const logProb = object({
  token: str,
  logprob: num,
  bytes: { type: "array", items: int },
  top_logprobs: { type: "array", items: topLogProb },
});
const urlCitation = object({ type: { const: "url_citation" }, url: str, start_index: int, end_index: int, title: str });

const contentParts: Record<string, Schema> = {
  input_text: object({ type: { const: "input_text" }, text: str }),
  output_text: object({
    type: { const: "output_text" },
    text: str,
    annotations: { type: "array", items: ref("Annotation") },
    logprobs: { type: "array", items: ref("LogProb") },
  }),
  text: object({ type: { const: "text" }, text: str }),
  summary_text: object({ type: { const: "summary_text" }, text: str }),
  reasoning_text: object({ type: { const: "reasoning_text" }, text: str }),
  refusal: object({ type: { const: "refusal" }, refusal: str }),
  input_image: object({ type: { const: "input_image" }, image_url: nullableStr, detail: { enum: ["low", "high", "auto"] } }),
  input_file: object({ type: { const: "input_file" }, filename: str, file_url: str }, ["type"]),
  input_video: object({ type: { const: "input_video" }, video_url: str }),
};
const { input_video: _video, ...nonVideoParts } = contentParts;

// Output items ---------------------------------------------------------------------------------

const message = object(
  {
    type: { const: "message" },
    id: str,
    status: { enum: ITEM_STATUS },
    role: { enum: ["user", "assistant", "system", "developer"] },
    content: { type: "array", items: ref("MessageContent") },
    phase: { enum: ["commentary", "final_answer"] },
  },
  ["type", "id", "status", "role", "content"],
);

const functionCall = object({
  type: { const: "function_call" },
  id: str,
  call_id: str,
  name: str,
  arguments: str,
  status: { enum: ITEM_STATUS },
});

const functionCallOutput = object({
  type: { const: "function_call_output" },
  id: str,
  call_id: str,
  output: {
    anyOf: [
      str,
      {
        type: "array",
        items: byType(
          { input_text: contentParts.input_text!, input_image: contentParts.input_image!, input_file: contentParts.input_file! },
          false,
        ),
      },
    ],
  },
  status: { enum: ITEM_STATUS },
});

// The spec's prose: reasoning `content`, `encrypted_content` and `summary` "can be null or the zero-value";
// its schema requires `summary` (an array) and types the other two when present.
const reasoning = object(
  {
    type: { const: "reasoning" },
    id: str,
    summary: { type: "array", items: ref("PartNoVideo") },
    content: { type: ["array", "null"], items: ref("PartNoVideo") },
    encrypted_content: nullableStr,
  },
  ["type", "id", "summary"],
);

const compaction = object({ type: { const: "compaction" }, id: str, encrypted_content: str, created_by: str }, [
  "type",
  "id",
  "encrypted_content",
]);

// Tools, tool choice, text, reasoning config, usage ---------------------------------------------

const functionTool = object({
  type: { const: "function" },
  name: str,
  description: nullableStr,
  parameters: { type: ["object", "null"] },
  strict: { type: ["boolean", "null"] },
});

const TOOL_CHOICE_MODES = ["none", "auto", "required"];
const functionToolChoice = object({ type: { const: "function" }, name: str }, ["type"]);
const toolChoice: Schema = {
  anyOf: [
    { enum: TOOL_CHOICE_MODES },
    byType(
      {
        function: functionToolChoice,
        allowed_tools: object({
          type: { const: "allowed_tools" },
          tools: { type: "array", items: functionToolChoice },
          mode: { enum: TOOL_CHOICE_MODES },
        }),
      },
      false,
    ),
  ],
};

const textField = object(
  {
    format: byType(
      {
        text: object({ type: { const: "text" } }),
        json_object: object({ type: { const: "json_object" } }),
        // The OpenAPI document types `schema` as null (a generator artefact); an object or null is accepted.
        json_schema: object({
          type: { const: "json_schema" },
          name: str,
          description: nullableStr,
          schema: { type: ["object", "null"] },
          strict: bool,
        }),
      },
      false,
    ),
    verbosity: { enum: ["low", "medium", "high"] },
  },
  ["format"],
);

// "minimal" is in the spec's descriptions of ReasoningEffortEnum, though not in its enum list.
const reasoningConfig = nullableObject({
  effort: { enum: ["none", "minimal", "low", "medium", "high", "xhigh", null] },
  summary: { enum: ["concise", "detailed", "auto", null] },
});

const usage = nullableObject({
  input_tokens: int,
  output_tokens: int,
  total_tokens: int,
  input_tokens_details: object({ cached_tokens: int }),
  output_tokens_details: object({ reasoning_tokens: int }),
});

// The Response object ---------------------------------------------------------------------------

const RESPONSE_REQUIRED = [
  "id",
  "object",
  "created_at",
  "completed_at",
  "status",
  "incomplete_details",
  "model",
  "previous_response_id",
  "instructions",
  "output",
  "error",
  "tools",
  "tool_choice",
  "truncation",
  "parallel_tool_calls",
  "text",
  "top_p",
  "presence_penalty",
  "frequency_penalty",
  "top_logprobs",
  "temperature",
  "reasoning",
  "usage",
  "max_output_tokens",
  "max_tool_calls",
  "store",
  "background",
  "service_tier",
  "metadata",
  "safety_identifier",
  "prompt_cache_key",
];

const responseResource = object(
  {
    id: str,
    object: { const: "response" },
    created_at: int,
    completed_at: nullableInt,
    status: str,
    incomplete_details: nullableObject({ reason: str }),
    model: str,
    previous_response_id: nullableStr,
    instructions: nullableStr,
    output: { type: "array", items: ref("Item") },
    error: nullableObject({ code: str, message: str }),
    tools: { type: "array", items: byType({ function: functionTool }, true) },
    tool_choice: toolChoice,
    truncation: { enum: ["auto", "disabled"] },
    parallel_tool_calls: bool,
    text: textField,
    top_p: num,
    presence_penalty: num,
    frequency_penalty: num,
    top_logprobs: int,
    temperature: num,
    reasoning: reasoningConfig,
    usage,
    max_output_tokens: nullableInt,
    max_tool_calls: nullableInt,
    store: bool,
    background: bool,
    service_tier: str,
    // Required; the newest document gives it no type, the older ones MetadataParam (string values).
    metadata: { type: ["object", "null"], additionalProperties: { type: "string", maxLength: 512 } },
    safety_identifier: nullableStr,
    prompt_cache_key: nullableStr,
    // Optional.
    conversation: nullableObject({ id: str }),
    context_edits: { type: "array" },
  },
  RESPONSE_REQUIRED,
);

// Streaming events ----------------------------------------------------------------------------

const event = (type: string, fields: Record<string, Schema>, optional: Record<string, Schema> = {}): Schema =>
  object({ type: { const: type }, sequence_number: int, ...fields, ...optional }, ["type", "sequence_number", ...Object.keys(fields)]);

const lifecycle = (type: string) => event(type, { response: ref("Response") });
const itemEvent = (type: string) => event(type, { output_index: int, item: nullableRef("Item") });
const partEvent = (type: string) => event(type, { item_id: str, output_index: int, content_index: int, part: ref("PartNoVideo") });
const inContent = { item_id: str, output_index: int, content_index: int };
const inSummary = { item_id: str, output_index: int, summary_index: int };
const obfuscation = { obfuscation: str };
const logprobs = { type: "array", items: ref("LogProb") } satisfies Schema;

const streamEvents: Record<string, Schema> = {
  "response.created": lifecycle("response.created"),
  "response.queued": lifecycle("response.queued"),
  "response.in_progress": lifecycle("response.in_progress"),
  "response.completed": lifecycle("response.completed"),
  "response.failed": lifecycle("response.failed"),
  "response.incomplete": lifecycle("response.incomplete"),
  "response.output_item.added": itemEvent("response.output_item.added"),
  "response.output_item.done": itemEvent("response.output_item.done"),
  "response.content_part.added": partEvent("response.content_part.added"),
  "response.content_part.done": partEvent("response.content_part.done"),
  "response.output_text.delta": event("response.output_text.delta", { ...inContent, delta: str, logprobs }, obfuscation),
  "response.output_text.done": event("response.output_text.done", { ...inContent, text: str, logprobs }),
  "response.output_text.annotation.added": event("response.output_text.annotation.added", {
    ...inContent,
    annotation_index: int,
    annotation: nullableRef("Annotation"),
  }),
  "response.refusal.delta": event("response.refusal.delta", { ...inContent, delta: str }),
  "response.refusal.done": event("response.refusal.done", { ...inContent, refusal: str }),
  "response.reasoning.delta": event("response.reasoning.delta", { ...inContent, delta: str }, obfuscation),
  "response.reasoning.done": event("response.reasoning.done", { ...inContent, text: str }),
  "response.reasoning_summary_part.added": event("response.reasoning_summary_part.added", { ...inSummary, part: ref("PartNoVideo") }),
  "response.reasoning_summary_part.done": event("response.reasoning_summary_part.done", { ...inSummary, part: ref("PartNoVideo") }),
  "response.reasoning_summary_text.delta": event("response.reasoning_summary_text.delta", { ...inSummary, delta: str }, obfuscation),
  "response.reasoning_summary_text.done": event("response.reasoning_summary_text.done", { ...inSummary, text: str }),
  "response.function_call_arguments.delta": event(
    "response.function_call_arguments.delta",
    { item_id: str, output_index: int, delta: str },
    obfuscation,
  ),
  "response.function_call_arguments.done": event("response.function_call_arguments.done", {
    item_id: str,
    output_index: int,
    arguments: str,
  }),
  error: event("error", {
    error: object(
      { type: str, code: nullableStr, message: str, param: nullableStr, headers: { type: "object", additionalProperties: str } },
      ["type", "code", "message", "param"],
    ),
  }),
};

/** The streaming event types the spec defines (an extension event's type has an implementor prefix). */
export const STREAM_EVENT_TYPES = Object.keys(streamEvents);

// The spec's prose: every item, an extension item too, has `id`, `type` and `status`.
const standardItems = byType(
  { message, function_call: functionCall, function_call_output: functionCallOutput, reasoning, compaction },
  true,
);
const item: Schema = {
  ...standardItems,
  allOf: [
    ...(standardItems.allOf ?? []),
    { if: { type: "object", required: ["type"], properties: { type: EXTENSION_TYPE } }, then: { required: ["id", "status"] } },
  ],
};

const defs: Record<string, Schema> = {
  Response: responseResource,
  Item: item,
  MessageContent: byType(contentParts, false),
  PartNoVideo: byType(nonVideoParts, false),
  Annotation: urlCitation,
  LogProb: logProb,
};

// Extension events (`acme:…`) need only `type` and `sequence_number`.
const anyStreamEvent = byType(streamEvents, true);
const streamEvent: Schema = {
  ...anyStreamEvent,
  required: ["type", "sequence_number"],
  properties: { ...anyStreamEvent.properties, sequence_number: int },
};

const responseValidator = new Validator({ $defs: defs, ...ref("Response") }, "2020-12", false);
const streamEventValidator = new Validator({ $defs: defs, ...streamEvent }, "2020-12", false);

/** Keywords whose errors only say that a nested schema failed; the nested errors say what. */
const WRAPPERS = new Set(["properties", "items", "prefixItems", "$ref", "allOf", "if", "then", "else", "additionalProperties"]);

/** `#/output/0/content` → `output[0].content` (the root is `(root)`). */
function fieldPath(instanceLocation: string, extra?: string): string {
  const segments = instanceLocation.replace(/^#\/?/, "").split("/").filter(Boolean);
  if (extra !== undefined) segments.push(extra);
  const path = segments.map((s, i) => (/^\d+$/.test(s) ? `[${s}]` : i === 0 ? s : `.${s}`)).join("");
  return path === "" ? "(root)" : path;
}

function valueAt(root: unknown, instanceLocation: string): unknown {
  let value = root;
  for (const segment of instanceLocation.replace(/^#\/?/, "").split("/").filter(Boolean)) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<string, unknown>)[decodeURIComponent(segment)];
  }
  return value;
}

const shown = (value: unknown) => {
  const text = value === undefined ? "undefined" : JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
};

/**
 * The violations of `value` against the validator, one line each: `field.path: reason`. Errors
 * inside the branches of an `anyOf` are folded into one line for the `anyOf` itself.
 */
function violations(validator: Validator, value: unknown): string[] {
  const { errors } = validator.validate(value);
  const lines = new Set<string>();
  for (const error of errors as OutputUnit[]) {
    if (WRAPPERS.has(error.keyword)) continue;
    if (/\/anyOf\/\d+\//.test(error.keywordLocation)) continue;
    if (error.keyword === "required") {
      const missing = /property "([^"]+)"/.exec(error.error)?.[1];
      lines.add(`${fieldPath(error.instanceLocation, missing)}: required, missing`);
    } else if (error.keyword === "anyOf") {
      lines.add(
        `${fieldPath(error.instanceLocation)}: matches none of the allowed shapes (got ${shown(valueAt(value, error.instanceLocation))})`,
      );
    } else {
      lines.add(`${fieldPath(error.instanceLocation)}: ${error.error} (got ${shown(valueAt(value, error.instanceLocation))})`);
    }
  }
  return [...lines];
}

/** The spec violations of a Response object (empty when it is valid). */
export const responseViolations = (value: unknown): string[] => violations(responseValidator, value);

/** The spec violations of one streaming event's data (empty when it is valid). */
export const streamEventViolations = (value: unknown): string[] => violations(streamEventValidator, value);

/** `soft`: record the failure and let the test go on (`expect.soft`), so later checks still report. */
export type ExpectOptions = { label?: string; soft?: boolean };

/** Fails the test, listing every violation (`path: reason`), unless `value` is a valid Response object. */
export function expectValidResponse(value: unknown, { label = "response", soft = false }: ExpectOptions = {}): void {
  const found = responseViolations(value);
  (soft ? expect.soft : expect)(found, `${label} violates the Open Responses Response schema:\n  ${found.join("\n  ")}`).toEqual([]);
}

/** Fails the test, listing every violation, unless `event` is a valid streaming event. */
export function expectValidStreamEvent(event: unknown, { label, soft = false }: ExpectOptions = {}): void {
  const found = streamEventViolations(event);
  const name =
    label ??
    `event ${shown((event as { type?: unknown } | null)?.type)} #${shown((event as { sequence_number?: unknown } | null)?.sequence_number)}`;
  (soft ? expect.soft : expect)(found, `${name} violates the Open Responses streaming event schema:\n  ${found.join("\n  ")}`).toEqual([]);
}

/**
 * `expectValidStreamEvent` for a whole stream, in one failure: each distinct violation is listed
 * once, with the events (`type#sequence_number`) that have it.
 */
export function expectValidStreamEvents(events: unknown[], { label = "stream", soft = false }: ExpectOptions = {}): void {
  const seen = new Map<string, string[]>();
  for (const event of events) {
    const { type, sequence_number: seq } = (event ?? {}) as { type?: unknown; sequence_number?: unknown };
    for (const line of streamEventViolations(event)) seen.set(line, [...(seen.get(line) ?? []), `${String(type)}#${String(seq)}`]);
  }
  const found = [...seen].map(
    ([line, where]) => `${line} [${where.slice(0, 6).join(", ")}${where.length > 6 ? `, … (${where.length} events)` : ""}]`,
  );
  (soft ? expect.soft : expect)(
    found,
    `${label}: events violate the Open Responses streaming event schemas:\n  ${found.join("\n  ")}`,
  ).toEqual([]);
}
