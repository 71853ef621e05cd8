import { metaschemaProblem } from "../agents/schema-meta";
import { modelInfo, refusesForcedToolChoice, refusesPrefill } from "../providers/model-catalog";
import { checkFields } from "./anthropic-fields";
import { checkBlocks } from "./anthropic-block-rules";
import { checkCacheTtls } from "./anthropic-cache-rules";
import { checkAnthropicMedia } from "./anthropic-media-rules";
import { checkStrictSchemaCounts, checkTools } from "./anthropic-tool-rules";
import { InvalidRequest } from "./conversation";
import { checkThinkingRules, thinkingBlockProblem } from "./anthropic-thinking";
import { asArray, isObject, type JsonObject } from "./values";

/** A message's content blocks (a string content is one text block). */
const blocksOf = (content: unknown): JsonObject[] =>
  typeof content === "string" ? [{ type: "text", text: content }] : asArray(content).filter(isObject);

const TOOL_USE_ID = /^[a-zA-Z0-9_-]+$/;
const MAX_BREAKPOINTS = 4;

/**
 * Checks a Messages request the way the Anthropic API does before it runs the model, throwing
 * the API's own 400 message (docs/providers.md lists each rule). Consecutive messages of one
 * role are accepted: the API joins them into one turn, so the tool pairing rules apply to turns.
 */
export function checkAnthropicRequest(body: JsonObject): void {
  checkFields(body, asArray(body.messages));
  const maxTokens = Number(body.max_tokens);
  const most = modelInfo("anthropic", String(body.model ?? ""))?.max_output_tokens;
  if (most !== undefined && maxTokens > most) {
    throw new InvalidRequest(
      `max_tokens: ${maxTokens} > ${most}, which is the maximum allowed number of output tokens for ${String(body.model)}`,
    );
  }
  checkSystem(body);
  checkThinking(body);
  checkTools(body);
  const forced = isObject(body.tool_choice) ? body.tool_choice.type : undefined;
  if ((forced === "any" || forced === "tool") && refusesForcedToolChoice(String(body.model ?? ""))) {
    throw new InvalidRequest('tool_choice: type "tool" and "any" are not supported for this model.');
  }
  for (const sequence of asArray(body.stop_sequences)) {
    if (sequence === "") throw new InvalidRequest("stop_sequences: each stop sequence must be non-empty");
    if (typeof sequence === "string" && sequence.trim() === "")
      throw new InvalidRequest("stop_sequences: each stop sequence must contain non-whitespace");
  }
  const messages = asArray(body.messages).filter(isObject);
  const first = messages[0];
  if (first && first.role !== "user") throw new InvalidRequest('messages: first message must use the "user" role');
  if (messages.at(-1)?.role === "assistant" && refusesPrefill(String(body.model ?? ""))) {
    throw new InvalidRequest("This model does not support assistant message prefill. The conversation must end with a user message.");
  }
  checkContent(messages);
  checkBlocks(String(body.model ?? ""), messages);
  checkThinkingRules(body, messages);
  checkAnthropicMedia(messages);
  checkToolsDefined(body, messages);
  checkToolSchemas(body);
  checkToolPairing(messages);
  checkBreakpoints(body, messages);
  checkCacheTtls(body, messages);
  checkOutputSchema(body);
  checkStrictSchemaCounts(body);
}

/** Manual thinking refuses a forced tool, and the adaptive-only models refuse manual thinking. */
function checkThinking(body: JsonObject): void {
  const thinking = isObject(body.thinking) ? body.thinking : null;
  if (thinking?.type !== "enabled") return;
  if (modelInfo("anthropic", String(body.model ?? ""))?.refuses.includes("thinking.budget_tokens")) {
    throw new InvalidRequest(
      '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.',
    );
  }
  const choice = isObject(body.tool_choice) ? body.tool_choice.type : undefined;
  if (choice === "any" || choice === "tool") throw new InvalidRequest("Thinking may not be enabled when tool_choice forces tool use.");
}

/** The system prompt's text blocks, like a message's, must hold non-whitespace text (and no breakpoint when empty). */
function checkSystem(body: JsonObject): void {
  const blocks = typeof body.system === "string" ? [{ type: "text", text: body.system }] : asArray(body.system).filter(isObject);
  for (const [index, block] of blocks.entries()) {
    if (block.type !== "text") continue;
    const text = typeof block.text === "string" ? block.text : "";
    if (text === "" && isObject(block.cache_control))
      throw new InvalidRequest(`system.${index}: cache_control cannot be set for empty text blocks`);
    if (text === "") throw new InvalidRequest("system: text content blocks must be non-empty");
    if (text.trim() === "") throw new InvalidRequest("system: text content blocks must contain non-whitespace text");
  }
}

function checkContent(messages: JsonObject[]): void {
  const latest = messages.findLastIndex((message) => message.role === "assistant");
  messages.forEach((message, index) => {
    const blocks = blocksOf(message.content);
    blocks.forEach((block, position) => {
      if (block.type === "text" && block.text === "" && isObject(block.cache_control)) {
        throw new InvalidRequest(`messages.${index}.content.${position}: cache_control cannot be set for empty text blocks`);
      }
    });
    const final = index === messages.length - 1 && message.role === "assistant";
    if (blocks.length === 0 && !final) {
      throw new InvalidRequest(
        `messages.${index}: all messages must have non-empty content except for the optional final assistant message`,
      );
    }
    const texts = blocks.filter((block) => block.type === "text").map((block) => (typeof block.text === "string" ? block.text : ""));
    if (texts.some((text) => text === "") && !(final && blocks.length === 1))
      throw new InvalidRequest("messages: text content blocks must be non-empty");
    // A whitespace-only block passes next to a block with real text, not alone.
    if (texts.length > 0 && texts.every((text) => text.trim() === "") && !final) {
      throw new InvalidRequest("messages: text content blocks must contain non-whitespace text");
    }
    blocks.forEach((block, position) => {
      if (block.type === "tool_use" && !(typeof block.id === "string" && TOOL_USE_ID.test(block.id))) {
        throw new InvalidRequest(`messages.${index}.content.${position}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'`);
      }
      const problem = block.type === "thinking" ? thinkingBlockProblem(block, index === latest) : null;
      if (problem) throw new InvalidRequest(`messages.${index}.content.${position}: ${problem}`);
    });
  });
}

/** Each tool's `input_schema` must be valid JSON Schema (draft 2020-12) with a root `type: "object"`. */
function checkToolSchemas(body: JsonObject): void {
  asArray(body.tools).forEach((tool, index) => {
    if (!isObject(tool) || tool.input_schema === undefined) return;
    const schema = tool.input_schema;
    if (!isObject(schema) || schema.type !== "object" || metaschemaProblem(schema) !== null) {
      throw new InvalidRequest(`tools.${index}.custom.input_schema: JSON schema is invalid. It must match JSON Schema draft 2020-12`);
    }
  });
}

function checkToolsDefined(body: JsonObject, messages: JsonObject[]): void {
  const usesTools = messages.some((m) => blocksOf(m.content).some((b) => b.type === "tool_use" || b.type === "tool_result"));
  if (usesTools && asArray(body.tools).length === 0) {
    throw new InvalidRequest("Requests which include `tool_use` or `tool_result` blocks must define tools.");
  }
}

type Turn = { role: unknown; indexes: number[] };

/** Consecutive messages of one role, as the API joins them. */
function turnsOf(messages: JsonObject[]): Turn[] {
  const turns: Turn[] = [];
  messages.forEach((message, index) => {
    const last = turns.at(-1);
    if (last && last.role === message.role) last.indexes.push(index);
    else turns.push({ role: message.role, indexes: [index] });
  });
  return turns;
}

function checkToolPairing(messages: JsonObject[]): void {
  const ids = (turn: Turn | undefined, type: "tool_use" | "tool_result", key: "id" | "tool_use_id") =>
    (turn?.indexes ?? []).flatMap((i) =>
      blocksOf(messages[i]?.content)
        .filter((b) => b.type === type)
        .map((b) => String(b[key])),
    );
  const turns = turnsOf(messages);
  turns.forEach((turn, t) => {
    const next = turns[t + 1];
    if (turn.role === "assistant") {
      const results = new Set(ids(next, "tool_result", "tool_use_id"));
      const missing = ids(turn, "tool_use", "id").filter((id) => !results.has(id));
      if (missing.length > 0) {
        throw new InvalidRequest(
          `messages.${turn.indexes.at(-1)}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
        );
      }
      return;
    }
    const calls = new Set(t > 0 ? ids(turns[t - 1], "tool_use", "id") : []);
    let other = false;
    for (const index of turn.indexes) {
      blocksOf(messages[index]?.content).forEach((block, position) => {
        if (block.type !== "tool_result") other = true;
        else if (other)
          throw new InvalidRequest(
            `messages.${index}.content.${position}: \`tool_result\` blocks must come first in a user message, before any other content`,
          );
      });
    }
    for (const index of turn.indexes) {
      blocksOf(messages[index]?.content).forEach((block, position) => {
        if (block.type === "tool_result" && !calls.has(String(block.tool_use_id))) {
          throw new InvalidRequest(
            `messages.${index}.content.${position}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(block.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
          );
        }
      });
    }
  });
}

function checkBreakpoints(body: JsonObject, messages: JsonObject[]): void {
  const marked = (blocks: unknown[]) => blocks.filter((b) => isObject(b) && isObject(b.cache_control)).length;
  const count =
    (isObject(body.cache_control) ? 1 : 0) +
    marked(asArray(body.system)) +
    marked(asArray(body.tools)) +
    messages.reduce((n, m) => n + marked(blocksOf(m.content)) + blocksOf(m.content).reduce((k, b) => k + marked(asArray(b.content)), 0), 0);
  if (count > MAX_BREAKPOINTS)
    throw new InvalidRequest(`A maximum of ${MAX_BREAKPOINTS} blocks with cache_control may be provided. Found ${count}.`);
}

/** The string formats structured outputs take (the SDK's `transformJSONSchema` keeps only these). */
const FORMATS = new Set(["date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"]);
/** A `{n,m}` bound above this is "too complex" (a guess: the API documents no number, A58). */
const MAX_REPEAT = 1000;

/** A pattern the grammar compiler refuses: a large `{n,m}` bound, or a quantified group inside a quantified group. */
function tooComplex(pattern: string): boolean {
  const bounds = [...pattern.matchAll(/\{(\d+)(?:,(\d*))?\}/g)].map((match) => Number(match[2] || match[1]));
  return bounds.some((bound) => bound > MAX_REPEAT) || /\([^()]*[*+}][^()]*\)[*+{]/.test(pattern);
}

const NUMBER_LIMITS = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"];
const STRING_LIMITS = ["minLength", "maxLength"];

/** Structured outputs accept a subset of JSON Schema (the SDK's `transformJSONSchema` produces it). */
function checkOutputSchema(body: JsonObject): void {
  const config = body.output_config;
  const format = isObject(config) ? config.format : undefined;
  if (isObject(format) && format.type === "json_schema") checkSchema(format.schema, "output_config.format.schema");
}

function checkSchema(schema: unknown, path: string): void {
  if (!isObject(schema)) return;
  const type = schema.type;
  const refuse = (message: string) => {
    throw new InvalidRequest(`${path}: ${message}`);
  };
  if (type === "object" && schema.additionalProperties !== false)
    refuse("For 'object' type, 'additionalProperties' must be explicitly set to false");
  const limits = type === "number" || type === "integer" ? NUMBER_LIMITS : type === "string" ? STRING_LIMITS : [];
  const found = limits.filter((key) => key in schema);
  if (found.length > 0) refuse(`For '${String(type)}' type, properties ${found.join(", ")} are not supported`);
  if (type === "string" && schema.format !== undefined && !FORMATS.has(String(schema.format)))
    throw new InvalidRequest(`output_config.format.schema: Invalid schema: Unsupported format '${String(schema.format)}'.`);
  if (type === "string" && typeof schema.pattern === "string" && tooComplex(schema.pattern)) {
    throw new InvalidRequest(
      "output_config.format.schema: Unsupported regex feature in pattern field: pattern is too complex for structured output: reduce the {n,m} upper bound, narrow the character class range, or avoid nesting quantified groups",
    );
  }
  if (type === "array" && "minItems" in schema && schema.minItems !== 0 && schema.minItems !== 1) {
    refuse("For 'array' type, 'minItems' values other than 0 or 1 are not supported");
  }
  for (const key of ["properties", "$defs", "definitions"]) {
    const children = schema[key];
    if (isObject(children)) for (const [name, child] of Object.entries(children)) checkSchema(child, `${path}.${key}.${name}`);
  }
  for (const key of ["anyOf", "allOf", "oneOf"]) {
    for (const [i, child] of asArray(schema[key]).entries()) checkSchema(child, `${path}.${key}.${i}`);
  }
  if (schema.items !== undefined) checkSchema(schema.items, `${path}.items`);
}
