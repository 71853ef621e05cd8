import { modelInfo } from "../providers/model-catalog";
import { isReasoningModel } from "../providers/openai-reasoning";
import { InvalidRequest } from "./conversation";
import { unseal } from "./openai-reasoning";
import { checkResponsesFields } from "./openai-responses-fields";
import { asArray, asString, isObject, type JsonObject } from "./values";

/** A request the Responses API refuses, with OpenAI's `param`, `code` and status (400, or 404 for an item it cannot find). */
export class ResponsesViolation extends InvalidRequest {
  constructor(
    message: string,
    param: string | null,
    code: string | null = null,
    readonly status = 400,
  ) {
    super(message, param, code);
    this.name = "ResponsesViolation";
  }
}

/** The input item types the API knows (the SDK's `ResponseInputItem`). */
const ITEM_TYPES = [
  "additional_tools",
  "apply_patch_call",
  "apply_patch_call_output",
  "code_interpreter_call",
  "compaction",
  "compaction_trigger",
  "computer_call",
  "computer_call_output",
  "configuration_update",
  "custom_tool_call",
  "custom_tool_call_output",
  "file_search_call",
  "function_call",
  "function_call_output",
  "image_generation_call",
  "item_reference",
  "local_shell_call",
  "local_shell_call_output",
  "mcp_approval_request",
  "mcp_approval_response",
  "mcp_call",
  "mcp_list_tools",
  "message",
  "program",
  "program_output",
  "reasoning",
  "shell_call",
  "shell_call_output",
  "tool_search_call",
  "tool_search_output",
  "web_search_call",
];

/** The prefix of the ids the API makes for the item types Agentry sends back. */
const ID_PREFIXES: Record<string, string> = { message: "msg", reasoning: "rs", function_call: "fc" };

const MIN_OUTPUT_TOKENS = 16;
const MAX_CACHE_KEY = 64;

/**
 * Checks a Responses request the way OpenAI does beyond its JSON schema, throwing the
 * violation OpenAI answers (docs/providers.md, "OpenAI Responses: the rules Agentry follows").
 */
export function checkResponsesRequest(body: JsonObject, model: string): void {
  checkResponsesFields(body, model);
  checkLimits(body, model);
  checkModelParameters(body, model);
  if (asArray(body.include).includes("reasoning.encrypted_content") && !isReasoningModel(model)) {
    throw new ResponsesViolation("Encrypted content is not supported with this model.", "include");
  }
  const items = Array.isArray(body.input) ? body.input.filter(isObject) : [];
  items.forEach(checkItemShape);
  items.forEach((item, index) => {
    checkReasoning(item, items[index + 1], body.store === false);
  });
  checkCallPairing(items);
}

/** Sampling on a reasoning model, and reasoning on another, are refused as unsupported parameters. */
export function checkModelParameters(body: JsonObject, model: string): void {
  const unsupported = (param: string) =>
    new ResponsesViolation(`Unsupported parameter: '${param}' is not supported with this model.`, param, "unsupported_parameter");
  if (isReasoningModel(model)) {
    for (const param of ["temperature", "top_p"]) if (body[param] !== undefined && body[param] !== null) throw unsupported(param);
    return;
  }
  const reasoning = body.reasoning;
  if (isObject(reasoning) && reasoning.effort !== undefined && reasoning.effort !== null) throw unsupported("reasoning.effort");
}

function checkLimits(body: JsonObject, model: string): void {
  const max = body.max_output_tokens;
  const most = modelInfo("openai", model)?.max_output_tokens;
  // OpenAI documents the limit, not its message: this one follows its Chat Completions wording.
  if (typeof max === "number" && most !== undefined && max > most) {
    throw new ResponsesViolation(
      `max_output_tokens is too large: ${max}. This model supports at most ${most} output tokens, whereas you provided ${max}.`,
      "max_output_tokens",
      "invalid_value",
    );
  }
  if (typeof max === "number" && max < MIN_OUTPUT_TOKENS) {
    throw new ResponsesViolation(
      `Invalid 'max_output_tokens': integer below minimum value. Expected a value >= ${MIN_OUTPUT_TOKENS}, but got ${max} instead.`,
      "max_output_tokens",
      "integer_below_min_value",
    );
  }
  const key = body.prompt_cache_key;
  if (typeof key === "string" && key.length > MAX_CACHE_KEY) {
    throw new ResponsesViolation(
      `Invalid 'prompt_cache_key': string too long. Expected a string with maximum length ${MAX_CACHE_KEY}, but got a string with length ${key.length} instead.`,
      "prompt_cache_key",
      "string_above_max_length",
    );
  }
}

/** An item's type (a bare `{ role, content }` is a message) and its id's prefix. */
function checkItemShape(item: JsonObject, index: number): void {
  const type = asString(item.type) ?? (item.role === undefined ? "" : "message");
  if (!ITEM_TYPES.includes(type)) {
    const listed = ITEM_TYPES.map((t) => `'${t}'`);
    const supported = `${listed.slice(0, -1).join(", ")}, and ${listed.at(-1)}`;
    throw new ResponsesViolation(`Invalid value: '${type}'. Supported values are: ${supported}.`, `input[${index}]`, "invalid_value");
  }
  const prefix = ID_PREFIXES[type];
  const id = item.id;
  if (prefix !== undefined && id !== undefined && id !== null && !(typeof id === "string" && id.startsWith(prefix))) {
    throw new ResponsesViolation(
      `Invalid 'input[${index}].id': '${String(id)}'. Expected an ID that begins with '${prefix}'.`,
      `input[${index}].id`,
      "invalid_value",
    );
  }
}

/**
 * A reasoning item goes back with its encrypted content when nothing is stored (`store: false`),
 * content the API itself made, directly followed by the item that followed it.
 */
function checkReasoning(item: JsonObject, next: JsonObject | undefined, unstored: boolean): void {
  if (item.type !== "reasoning") return;
  const encrypted = asString(item.encrypted_content);
  const sealed = encrypted === undefined ? null : unseal(encrypted);
  const id = asString(item.id) ?? sealed?.id ?? "";
  if (encrypted === undefined && unstored) {
    throw new ResponsesViolation(
      `Item with id '${id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`,
      "input",
      null,
      404,
    );
  }
  if (encrypted !== undefined && sealed === null) {
    const shown = `${encrypted.slice(0, 4)}...${encrypted.slice(-4)}`;
    throw new ResponsesViolation(`The encrypted content ${shown} could not be verified.`, null, "invalid_encrypted_content");
  }
  const nextId = next === undefined ? undefined : asString(next.id);
  const follows = next !== undefined && (next.type === "message" || next.type === "function_call") && nextId !== undefined;
  if (!follows || (sealed !== null && sealed.next !== nextId)) {
    throw new ResponsesViolation(`Item '${id}' of type 'reasoning' was provided without its required following item.`, "input");
  }
}

/** Every function_call_output answers an earlier function_call, and every function_call is answered. */
function checkCallPairing(items: JsonObject[]): void {
  const calls = new Set<string>();
  const answered = new Set<string>();
  for (const item of items) {
    const callId = asString(item.call_id) ?? "";
    if (item.type === "function_call") calls.add(callId);
    if (item.type !== "function_call_output") continue;
    if (!calls.has(callId)) {
      throw new ResponsesViolation(`No tool call found for function call output with call_id ${callId}.`, "input");
    }
    answered.add(callId);
  }
  const unanswered = [...calls].find((callId) => !answered.has(callId));
  if (unanswered !== undefined) {
    throw new ResponsesViolation(`No tool output found for function call ${unanswered}.`, "input");
  }
}
