/**
 * OpenAI's documented request limits that both Agentry (which keeps its requests within them)
 * and the offline model (which refuses what OpenAI refuses) read: one place for each number
 * (docs/vendor-limits.md).
 */

/** Structured outputs with `strict: true` (R24–R27, C24). */
export const STRICT_SCHEMA_LIMITS = {
  /** Levels of nesting. */
  depth: 10,
  /** Object properties in the whole schema. */
  properties: 5000,
  /** Enum values in the whole schema. */
  enumValues: 1000,
  /** Characters of property names, definition names, enum and const values. */
  chars: 120_000,
  /** A string enum of more than this many values… */
  largeEnum: 250,
  /** …has at most this many characters of values. */
  largeEnumChars: 15_000,
} as const;

/** The values of the Responses API's `include` (R9). */
export const RESPONSES_INCLUDABLE = [
  "file_search_call.results",
  "web_search_call.results",
  "web_search_call.action.sources",
  "message.input_image.image_url",
  "computer_call_output.output.image_url",
  "code_interpreter_call.outputs",
  "reasoning.encrypted_content",
  "message.output_text.logprobs",
] as const;
