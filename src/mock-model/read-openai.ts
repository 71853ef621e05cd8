import { InvalidRequest, type Entry, type RequestView } from "./conversation";
import { checkChatRules } from "./openai-chat-rules";
import { asArray, asString, isObject, textOf, type JsonObject } from "./values";

const INPUT_TEXT = ["input_text", "output_text", "text"];

function modelOf(body: JsonObject): string {
  const model = asString(body.model);
  if (model === undefined) throw new InvalidRequest("Missing required parameter: 'model'.", "model");
  return model;
}

function schemaFrom(format: unknown): { schema: JsonObject | null; jsonMode: boolean } {
  if (!isObject(format)) return { schema: null, jsonMode: false };
  if (format.type === "json_object") return { schema: null, jsonMode: true };
  if (format.type !== "json_schema") return { schema: null, jsonMode: false };
  // Responses puts the schema on the format itself; Chat nests it under `json_schema`.
  const holder = isObject(format.json_schema) ? format.json_schema : format;
  return { schema: isObject(holder.schema) ? holder.schema : null, jsonMode: true };
}

/** Reads an OpenAI Responses request body (`POST /v1/responses`). */
export function readResponses(body: unknown): RequestView {
  if (!isObject(body)) throw new InvalidRequest("Invalid type for body: expected an object.");
  const model = modelOf(body);
  if (typeof body.input !== "string" && !Array.isArray(body.input)) {
    throw new InvalidRequest("Missing required parameter: 'input'.", "input");
  }
  const items: unknown[] = typeof body.input === "string" ? [{ role: "user", content: body.input }] : body.input;
  let systemText = asString(body.instructions) ?? "";
  const entries: Entry[] = [];
  for (const item of items) {
    if (!isObject(item)) throw new InvalidRequest("Invalid type for 'input': expected an object.", "input");
    if (item.type === "function_call") {
      entries.push({ kind: "call", id: asString(item.call_id) ?? "", name: asString(item.name) ?? "" });
    } else if (item.type === "function_call_output") {
      const output = textOf(item.output, INPUT_TEXT);
      entries.push({ kind: "result", id: asString(item.call_id) ?? "", output });
    } else if (item.role === "user") {
      entries.push({ kind: "user", text: textOf(item.content, INPUT_TEXT) });
    } else if (item.role === "assistant") {
      entries.push({ kind: "assistant" });
    } else if (item.role === "system" || item.role === "developer") {
      systemText += textOf(item.content, INPUT_TEXT);
    }
  }
  const text = isObject(body.text) ? body.text : {};
  return {
    raw: body,
    model,
    stream: body.stream === true,
    entries,
    systemText,
    cacheMarked: typeof body.prompt_cache_key === "string",
    ...schemaFrom(text.format),
    includeUsage: true,
  };
}

/** Reads an OpenAI Chat Completions request body (`POST /v1/chat/completions`). */
export function readChat(body: unknown): RequestView {
  if (!isObject(body)) throw new InvalidRequest("Invalid type for body: expected an object.");
  const model = modelOf(body);
  if (!Array.isArray(body.messages)) {
    throw new InvalidRequest("Missing required parameter: 'messages'.", "messages");
  }
  checkChatRules(body, model, body.messages);
  let systemText = "";
  const entries: Entry[] = [];
  for (const message of body.messages) {
    if (!isObject(message)) throw new InvalidRequest("Invalid type for 'messages': expected an object.", "messages");
    if (message.role === "user") {
      entries.push({ kind: "user", text: textOf(message.content, ["text"]) });
    } else if (message.role === "assistant") {
      entries.push({ kind: "assistant" });
      for (const call of asArray(message.tool_calls).filter(isObject)) {
        const fn = isObject(call.function) ? call.function : {};
        entries.push({ kind: "call", id: asString(call.id) ?? "", name: asString(fn.name) ?? "" });
      }
    } else if (message.role === "tool") {
      const output = textOf(message.content, ["text"]);
      entries.push({ kind: "result", id: asString(message.tool_call_id) ?? "", output });
    } else if (message.role === "system" || message.role === "developer") {
      systemText += textOf(message.content, ["text"]);
    }
  }
  const options = isObject(body.stream_options) ? body.stream_options : {};
  return {
    raw: body,
    model,
    stream: body.stream === true,
    entries,
    systemText,
    cacheMarked: typeof body.prompt_cache_key === "string",
    ...schemaFrom(body.response_format),
    includeUsage: options.include_usage === true,
  };
}
