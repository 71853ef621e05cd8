import { RESPONSES_INCLUDABLE } from "../providers/openai-limits";
import { checkMedia, type MediaPart } from "./openai-media-rules";
import {
  checkEffort,
  checkPromptCache,
  checkRanges,
  checkRequestFields,
  checkString,
  invalidValue,
  MAX_STRING,
  tooLong,
} from "./openai-field-rules";
import { checkStrictSchema } from "./openai-strict-limits";
import { InvalidRequest } from "./conversation";
import { asArray, asString, isObject, type JsonObject } from "./values";

/**
 * The Responses API's field limits (docs/vendor-limits.md, R4–R33): ranges, reasoning effort,
 * `include` values, tools and their names, strict schemas, call ids, string lengths, media.
 */

const NAME_PATTERN = /^[a-zA-Z0-9_-]+$/;
const MAX_TOOL_NAME = 128;
const MAX_CALL_ID = 64;
const MAX_IMAGE_URL = 20_971_520;
const MAX_FILE_DATA = 73_400_320;

/** Throws the first field limit the request breaks, as OpenAI answers it. */
export function checkResponsesFields(body: JsonObject, model: string): void {
  checkRanges(body, [
    { param: "temperature", min: 0, max: 2 },
    { param: "top_p", min: 0, max: 1 },
    { param: "top_logprobs", min: 0, max: 20, integer: true },
  ]);
  checkRequestFields(body);
  if (body.stream_options !== undefined && body.stream_options !== null && body.stream !== true) {
    throw new InvalidRequest("The 'stream_options' parameter is only allowed when 'stream' is enabled.", "stream_options", "invalid_value");
  }
  asArray(body.include).forEach((value, index) => {
    if (!(RESPONSES_INCLUDABLE as readonly string[]).includes(String(value)))
      throw invalidValue(String(value), RESPONSES_INCLUDABLE, `include[${index}]`);
  });
  checkEffort(isObject(body.reasoning) ? body.reasoning.effort : undefined, model, "reasoning.effort");
  checkPromptCache(body, model);
  asArray(body.tools).forEach(checkTool);
  const text = isObject(body.text) ? body.text : {};
  const format = isObject(text.format) ? text.format : {};
  if (format.type === "json_schema" && format.strict === true) {
    const label = `response_format '${asString(format.name) ?? ""}'`;
    checkStrictSchema(format.schema, { label, param: "text.format.schema", code: "invalid_json_schema" });
  }
  const items = Array.isArray(body.input) ? body.input : [];
  const media: MediaPart[] = [];
  items.forEach((item, index) => {
    if (isObject(item)) checkItem(item, `input[${index}]`, media);
  });
  checkMedia(media, "input");
}

function checkTool(tool: unknown, index: number): void {
  if (!isObject(tool) || tool.type !== "function") return;
  const param = `tools[${index}].name`;
  const name = asString(tool.name) ?? "";
  if (name === "") throw new InvalidRequest(`Invalid '${param}': empty string.`, param, "empty_string");
  if (name.length > MAX_TOOL_NAME) throw tooLong(param, MAX_TOOL_NAME, name.length);
  if (!NAME_PATTERN.test(name)) {
    throw new InvalidRequest(
      `Invalid '${param}': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`,
      param,
      "invalid_value",
    );
  }
  if (tool.strict === true) {
    checkStrictSchema(tool.parameters, {
      label: `function '${name}'`,
      param: `tools[${index}].parameters`,
      code: "invalid_function_parameters",
    });
  }
}

/** One input item: its call id, its strings, its content and output parts (media collected for the request-wide limits). */
function checkItem(item: JsonObject, at: string, media: MediaPart[]): void {
  if ("call_id" in item) {
    const callId = asString(item.call_id) ?? "";
    if (callId === "") throw new InvalidRequest(`Invalid '${at}.call_id': empty string.`, `${at}.call_id`, "empty_string");
    if (callId.length > MAX_CALL_ID) throw tooLong(`${at}.call_id`, MAX_CALL_ID, callId.length);
  }
  checkString(item.encrypted_content, `${at}.encrypted_content`);
  checkString(item.content, `${at}.content`);
  checkString(item.output, `${at}.output`);
  asArray(item.content).forEach((part, index) => {
    checkPart(part, `${at}.content[${index}]`, media);
  });
  asArray(item.output).forEach((part, index) => {
    checkPart(part, `${at}.output[${index}]`, media);
  });
}

function checkPart(part: unknown, at: string, media: MediaPart[]): void {
  if (!isObject(part)) return;
  checkString(part.text, `${at}.text`, MAX_STRING);
  checkString(part.image_url, `${at}.image_url`, MAX_IMAGE_URL);
  checkString(part.file_data, `${at}.file_data`, MAX_FILE_DATA);
  if (part.type === "input_image" && typeof part.image_url === "string") {
    media.push({ kind: "image", url: part.image_url, detail: part.detail, param: at });
  }
  if (part.type === "input_file" && typeof part.file_data === "string") media.push({ kind: "file", data: part.file_data, param: at });
}
