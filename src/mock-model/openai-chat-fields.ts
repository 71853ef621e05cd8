import { checkMedia, type MediaPart } from "./openai-media-rules";
import { checkEffort, checkPromptCache, checkRanges, checkRequestFields, checkString, emptyArray, tooLong } from "./openai-field-rules";
import { checkStrictSchema } from "./openai-strict-limits";
import { InvalidRequest } from "./conversation";
import { asArray, asString, isObject, type JsonObject } from "./values";

/**
 * The Chat Completions API's field limits (docs/vendor-limits.md, C6–C28): ranges, reasoning
 * effort, tools, strict schemas, content arrays and strings, tool call ids, media, JSON mode.
 */

const MAX_TOOL_CALL_ID = 40;

/** Throws the first field limit the request breaks, as OpenAI answers it. */
export function checkChatFields(body: JsonObject, model: string, messages: unknown[]): void {
  checkRanges(body, [
    { param: "temperature", min: 0, max: 2 },
    { param: "top_p", min: 0, max: 1 },
    { param: "frequency_penalty", min: -2, max: 2 },
    { param: "presence_penalty", min: -2, max: 2 },
    { param: "top_logprobs", min: 0, max: 20, integer: true },
    { param: "n", min: 1, max: 128, integer: true },
  ]);
  checkRequestFields(body);
  checkEffort(body.reasoning_effort, model, "reasoning_effort");
  checkPromptCache(body, model);
  asArray(body.tools).forEach((tool, index) => {
    const fn = isObject(tool) && isObject(tool.function) ? tool.function : {};
    if (fn.strict !== true) return;
    const label = `function '${asString(fn.name) ?? ""}'`;
    checkStrictSchema(fn.parameters, { label, param: `tools[${index}].function.parameters`, code: "invalid_function_parameters" });
  });
  const format = isObject(body.response_format) ? body.response_format : {};
  const schema = isObject(format.json_schema) ? format.json_schema : {};
  if (format.type === "json_schema" && schema.strict === true) {
    checkStrictSchema(schema.schema, {
      label: `response_format '${asString(schema.name) ?? ""}'`,
      param: "response_format",
      code: "invalid_json_schema",
    });
  }
  const media: MediaPart[] = [];
  messages.forEach((message, index) => {
    if (isObject(message)) checkMessage(message, `messages[${index}]`, media);
  });
  checkMedia(media, "messages");
  if (
    format.type === "json_object" &&
    !messages.some((message) => /json/i.test(JSON.stringify(isObject(message) ? message.content : "")))
  ) {
    throw new InvalidRequest(
      "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.",
      "messages",
    );
  }
}

/** One message: its content (not an empty array; strings within the limit), its tool call ids (C9, C10), its media. */
function checkMessage(message: JsonObject, at: string, media: MediaPart[]): void {
  const content = message.content;
  if (Array.isArray(content) && content.length === 0) throw emptyArray(`${at}.content`);
  checkString(content, `${at}.content`);
  asArray(content).forEach((part, index) => {
    if (!isObject(part)) return;
    const where = `${at}.content[${index}]`;
    checkString(part.text, `${where}.text`);
    const image = isObject(part.image_url) ? part.image_url : null;
    if (part.type === "image_url" && image !== null && typeof image.url === "string") {
      media.push({ kind: "image", url: image.url, detail: image.detail, param: `${where}.image_url` });
    }
    const file = isObject(part.file) ? part.file : null;
    if (part.type === "file" && file !== null && typeof file.file_data === "string")
      media.push({ kind: "file", data: file.file_data, param: `${where}.file` });
  });
  asArray(message.tool_calls).forEach((call, index) => {
    const callId = isObject(call) ? asString(call.id) : undefined;
    if (callId !== undefined && callId.length > MAX_TOOL_CALL_ID)
      throw tooLong(`${at}.tool_calls[${index}].id`, MAX_TOOL_CALL_ID, callId.length);
  });
  const id = asString(message.tool_call_id);
  if (message.role === "tool" && id !== undefined && id.length > MAX_TOOL_CALL_ID)
    throw tooLong(`${at}.tool_call_id`, MAX_TOOL_CALL_ID, id.length);
}
