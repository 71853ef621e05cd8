import { modelInfo } from "../providers/model-catalog";
import { chatToolsNeedNoReasoning, isReasoningModel } from "../providers/openai-reasoning";
import { InvalidRequest } from "./conversation";
import { checkChatFields } from "./openai-chat-fields";
import { tooLong } from "./openai-field-rules";
import { asArray, asString, isObject, type JsonObject } from "./values";

/**
 * The rules OpenAI's Chat Completions API enforces on a request body that the SDK's types do
 * not, each refused with OpenAI's own 400 message, `param` and `code` (docs/providers.md,
 * "Chat Completions: the rules Agentry follows").
 */

const ROLES = ["system", "assistant", "user", "function", "tool", "developer"];
const NAME_PATTERN = /^[a-zA-Z0-9_-]+$/;
const MAX_NAME = 64;
const MAX_CACHE_KEY = 64;
const MAX_DESCRIPTION = 1024;
const MAX_STOP = 4;

const missing = (param: string) => new InvalidRequest(`Missing required parameter: '${param}'.`, param, "missing_required_parameter");

/** Throws `InvalidRequest` for the first rule the body breaks, as OpenAI answers it. */
export function checkChatRules(body: JsonObject, model: string, messages: unknown[]): void {
  checkChatFields(body, model, messages);
  checkTokenLimits(body, model);
  checkSampling(body, model);
  checkOptions(body);
  if (messages.length === 0) {
    throw new InvalidRequest(
      "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
      "messages",
      "empty_array",
    );
  }
  checkMessages(messages);
  asArray(body.tools).forEach((tool, index) => {
    const fn = isObject(tool) && isObject(tool.function) ? tool.function : {};
    checkName(asString(fn.name), `tools[${index}].function.name`);
    const description = asString(fn.description);
    if (description !== undefined && description.length > MAX_DESCRIPTION) {
      throw tooLong(`tools[${index}].function.description`, MAX_DESCRIPTION, description.length);
    }
  });
  const format = isObject(body.response_format) ? body.response_format : {};
  if (format.type === "json_schema") {
    const schema = isObject(format.json_schema) ? format.json_schema : {};
    checkName(asString(schema.name), "response_format.json_schema.name");
  }
}

/**
 * Reasoning models take only the default sampling (1); `reasoning_effort` is for reasoning
 * models alone.
 */
function checkSampling(body: JsonObject, model: string): void {
  const reasoning = isReasoningModel(model);
  for (const param of ["temperature", "top_p"]) {
    const value = body[param];
    if (!reasoning || value === undefined || value === null || value === 1) continue;
    throw new InvalidRequest(
      `Unsupported value: '${param}' does not support ${String(value)} with this model. Only the default (1) value is supported.`,
      param,
      "unsupported_value",
    );
  }
  const stop = body.stop;
  if (Array.isArray(stop) && stop.length > MAX_STOP) {
    throw new InvalidRequest(
      `Invalid 'stop': array too long. Expected an array with maximum length ${MAX_STOP}, but got an array with length ${stop.length} instead.`,
      "stop",
      "array_above_max_length",
    );
  }
  if (asArray(body.tools).length > 0 && chatToolsNeedNoReasoning(model) && body.reasoning_effort !== "none") {
    throw new InvalidRequest(
      `Function tools with reasoning_effort are not supported for ${model} in /v1/chat/completions. To use function tools, use /v1/responses or set reasoning_effort to 'none'.`,
      "reasoning_effort",
    );
  }
  if (reasoning && stop !== undefined && stop !== null) {
    throw new InvalidRequest("Unsupported parameter: 'stop' is not supported with this model.", "stop", "unsupported_parameter");
  }
  if (!reasoning && body.reasoning_effort !== undefined && body.reasoning_effort !== null) {
    throw new InvalidRequest(
      "Unsupported parameter: 'reasoning_effort' is not supported with this model.",
      "reasoning_effort",
      "unsupported_parameter",
    );
  }
}

function checkTokenLimits(body: JsonObject, model: string): void {
  if (body.max_tokens !== undefined && body.max_tokens !== null && isReasoningModel(model)) {
    throw new InvalidRequest(
      "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
      "max_tokens",
      "unsupported_parameter",
    );
  }
  for (const param of ["max_completion_tokens", "max_tokens"]) {
    const value = body[param];
    if (value === undefined || value === null) continue;
    if (typeof value !== "number" || !Number.isInteger(value)) {
      throw new InvalidRequest(
        `Invalid type for '${param}': expected an integer, but got ${typeof value === "number" ? "a decimal number" : typeof value} instead.`,
        param,
        "invalid_type",
      );
    }
    if (value < 1) {
      throw new InvalidRequest(
        `Invalid '${param}': integer below minimum value. Expected a value >= 1, but got ${value} instead.`,
        param,
        "integer_below_min_value",
      );
    }
    const most = modelInfo("openai", model)?.max_output_tokens;
    if (most !== undefined && value > most) {
      throw new InvalidRequest(
        `${param} is too large: ${value}. This model supports at most ${most} completion tokens, whereas you provided ${value}.`,
        param,
        "invalid_value",
      );
    }
  }
}

function checkOptions(body: JsonObject): void {
  if (body.stream_options !== undefined && body.stream_options !== null && body.stream !== true) {
    throw new InvalidRequest("The 'stream_options' parameter is only allowed when 'stream' is enabled.", "stream_options", "invalid_value");
  }
  const cacheKey = asString(body.prompt_cache_key);
  if (cacheKey !== undefined && cacheKey.length > MAX_CACHE_KEY) {
    throw tooLong("prompt_cache_key", MAX_CACHE_KEY, cacheKey.length);
  }
}

function checkName(name: string | undefined, param: string): void {
  if (name === undefined) throw missing(param);
  if (name.length > MAX_NAME) throw tooLong(param, MAX_NAME, name.length);
  if (!NAME_PATTERN.test(name)) {
    throw new InvalidRequest(
      `Invalid '${param}': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`,
      param,
      "invalid_value",
    );
  }
}

/**
 * Roles and contents, and the tool-call order: an assistant message's `tool_calls` are answered
 * by `tool` messages right after it, one per id, before any other message; a `tool` message
 * answers an id of the assistant message just before those tool messages.
 */
function checkMessages(messages: unknown[]): void {
  let open: { index: number; ids: string[]; answered: Set<string> } | null = null;
  messages.forEach((message, index) => {
    if (!isObject(message)) {
      throw new InvalidRequest(
        `Invalid type for 'messages[${index}]': expected an object, but got ${typeof message} instead.`,
        `messages[${index}]`,
        "invalid_type",
      );
    }
    const role = message.role;
    if (role === undefined) throw missing(`messages[${index}].role`);
    if (typeof role !== "string" || !ROLES.includes(role)) {
      throw new InvalidRequest(
        `Invalid value: '${String(role)}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.`,
        `messages[${index}].role`,
        "invalid_value",
      );
    }
    if (role === "tool") {
      const id = asString(message.tool_call_id);
      if (id === undefined) throw missing(`messages[${index}].tool_call_id`);
      if (open === null) {
        throw new InvalidRequest(
          "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          `messages.[${index}].role`,
        );
      }
      if (!open.ids.includes(id)) {
        throw new InvalidRequest(
          `Invalid parameter: 'tool_call_id' of '${id}' not found in 'tool_calls' of previous message.`,
          `messages.[${index}].tool_call_id`,
        );
      }
      open.answered.add(id);
      return;
    }
    if (open !== null) unanswered(open);
    open = null;
    if (role === "assistant") {
      open = checkAssistant(message, index);
    } else if (message.content === undefined || message.content === null) {
      throw missing(`messages[${index}].content`);
    }
  });
  if (open !== null) unanswered(open);
}

function unanswered(open: { index: number; ids: string[]; answered: Set<string> }): void {
  const left = open.ids.filter((id) => !open.answered.has(id));
  if (left.length === 0) return;
  throw new InvalidRequest(
    `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${left.join(", ")}`,
    `messages.[${open.index}].role`,
  );
}

/** An assistant message needs content or tool calls; returns its open tool calls, if any. */
function checkAssistant(message: JsonObject, index: number): { index: number; ids: string[]; answered: Set<string> } | null {
  const calls = asArray(message.tool_calls);
  if (calls.length === 0) {
    if (message.content === undefined || message.content === null) {
      throw new InvalidRequest("Invalid value for 'content': expected a string, got null.", `messages.[${index}].content`);
    }
    return null;
  }
  const ids = calls.map((call, callIndex) => {
    const id = isObject(call) ? asString(call.id) : undefined;
    const param = `messages[${index}].tool_calls[${callIndex}].id`;
    if (id === undefined) throw missing(param);
    return id;
  });
  return { index, ids, answered: new Set() };
}
