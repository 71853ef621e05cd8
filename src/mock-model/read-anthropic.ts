import { checkAnthropicRequest } from "./anthropic-rules";
import { thinkingEnabled } from "./anthropic-thinking";
import { InvalidRequest, type Entry, type RequestView } from "./conversation";
import { asArray, asString, isObject, textOf, type JsonObject } from "./values";

/** Reads an Anthropic Messages request body (`POST /v1/messages`). */
export function readAnthropic(body: unknown): RequestView {
  if (!isObject(body)) throw new InvalidRequest("body: Input should be a valid dictionary");
  const model = asString(body.model);
  if (model === undefined) throw new InvalidRequest("model: Field required");
  if (typeof body.max_tokens !== "number") throw new InvalidRequest("max_tokens: Field required");
  if (!Array.isArray(body.messages)) throw new InvalidRequest("messages: Field required");
  checkAnthropicRequest(body);
  thinkingEnabled(body);

  const system = systemOf(body.system);
  let cacheMarked = isObject(body.cache_control) || system.cached;
  let systemText = system.text;
  const entries: Entry[] = [];
  for (const message of body.messages) {
    if (!isObject(message)) throw new InvalidRequest("messages: Input should be a valid dictionary");
    if (message.role === "system") {
      const part = systemOf(message.content);
      systemText += part.text;
      cacheMarked ||= part.cached;
    } else if (message.role === "assistant") {
      entries.push({ kind: "assistant" });
      for (const block of asArray(message.content).filter(isObject)) {
        if (block.type === "tool_use") {
          entries.push({ kind: "call", id: asString(block.id) ?? "", name: asString(block.name) ?? "" });
        }
      }
    } else if (message.role === "user") {
      entries.push(...userEntries(message.content));
    } else {
      throw new InvalidRequest(`messages: Unexpected role "${String(message.role)}"`);
    }
  }
  return {
    raw: body,
    model,
    stream: body.stream === true,
    entries,
    systemText,
    cacheMarked,
    schema: schemaOf(body),
    jsonMode: false,
    includeUsage: true,
  };
}

function systemOf(system: unknown): { text: string; cached: boolean } {
  if (typeof system === "string") return { text: system, cached: false };
  const blocks = asArray(system).filter(isObject);
  return { text: textOf(blocks, ["text"]), cached: blocks.some((block) => isObject(block.cache_control)) };
}

function userEntries(content: unknown): Entry[] {
  if (typeof content === "string") return [{ kind: "user", text: content }];
  const entries: Entry[] = [];
  const texts: string[] = [];
  for (const block of asArray(content).filter(isObject)) {
    if (block.type === "tool_result") {
      entries.push({ kind: "result", id: asString(block.tool_use_id) ?? "", output: textOf(block.content, ["text"]) });
    } else if (block.type === "text") {
      texts.push(asString(block.text) ?? "");
    }
  }
  if (texts.length > 0) entries.push({ kind: "user", text: texts.join("\n") });
  return entries;
}

/** `output_config.format` (GA structured outputs), or the older beta `output_format`. */
function schemaOf(body: JsonObject): JsonObject | null {
  const config = body.output_config;
  const format = isObject(config) ? config.format : body.output_format;
  if (isObject(format) && format.type === "json_schema" && isObject(format.schema)) return format.schema;
  return null;
}
