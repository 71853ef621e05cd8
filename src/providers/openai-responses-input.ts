import type { FunctionTool, ResponseInputContent, ResponseInputItem } from "openai/resources/responses/responses";
import type { Block, MediaBlock, Message } from "../core/messages";
import { dataUrl, mediaNote } from "./media-parts";
import { stringifyToolArguments, wireToolCallId } from "./tool-calls";
import type { MediaData, ToolSpec } from "./types";

/** Neutral tools as Responses function tools (not strict: our schemas are plain JSON Schema). */
export function toResponsesTools(tools: ToolSpec[]): FunctionTool[] {
  return tools.map((tool) => ({
    type: "function",
    name: tool.name,
    description: tool.description ?? null,
    parameters: tool.parameters,
    strict: false,
  }));
}

/**
 * Neutral messages as Responses input items, whichever provider produced them, in block
 * order: text runs become messages, tool calls `function_call` items keyed by `call_id`
 * (our tool_call_id; `id` only when it is the real `fc_` id OpenAI gave), tool results
 * `function_call_output` items. Reasoning goes back only when it is OpenAI's own item
 * (a `function_call` sent with its `fc_` id needs the reasoning item that preceded it).
 */
export function toResponsesInput(messages: Message[], media: Record<string, MediaData> = {}): ResponseInputItem[] {
  const items: ResponseInputItem[] = [];
  for (const message of messages) {
    const role = message.role === "assistant" ? "assistant" : "user";
    let text: (string | ResponseInputContent)[] = [];
    const flush = () => {
      if (text.length > 0) items.push(textMessage(role, text));
      text = [];
    };
    for (const block of message.content) {
      if (block.type === "text") {
        if (block.text) text.push(block.text);
        continue;
      }
      if (block.type === "image" || block.type === "file") {
        // Media is user input: it stays in the user message, in order with its text.
        text.push(responsesMedia(block, media[block.media_id]));
        continue;
      }
      flush();
      const item = toItem(block);
      if (item) items.push(item);
    }
    flush();
  }
  return items;
}

function textMessage(role: "user" | "assistant", parts: (string | ResponseInputContent)[]): ResponseInputItem {
  if (role === "assistant") return { type: "message", role, content: parts.filter((p) => typeof p === "string").join("\n\n") };
  return {
    type: "message",
    role,
    content: parts.map((part) => (typeof part === "string" ? { type: "input_text" as const, text: part } : part)),
  };
}

/** Images as `input_image` data URLs; files (PDF, text, Markdown) as `input_file` with `file_data` and `filename`. */
function responsesMedia(block: MediaBlock, data: MediaData | undefined): ResponseInputContent {
  if (!data) return { type: "input_text", text: mediaNote(block) };
  if (block.type === "image") return { type: "input_image", image_url: dataUrl(data), detail: "auto" };
  return { type: "input_file", file_data: dataUrl(data), filename: block.name ?? block.media_id };
}

function toItem(block: Exclude<Block, { type: "text" | "image" | "file" }>): ResponseInputItem | null {
  switch (block.type) {
    case "tool_call": {
      const id = block.provider_data?.["id"];
      return {
        type: "function_call",
        call_id: wireToolCallId(block.tool_call_id),
        name: block.name,
        arguments: stringifyToolArguments(block.arguments),
        ...(typeof id === "string" && id.startsWith("fc_") ? { id } : {}),
      };
    }
    case "tool_result":
      return { type: "function_call_output", call_id: wireToolCallId(block.tool_call_id), output: block.output };
    case "reasoning":
      return openAIReasoning(block);
  }
}

function openAIReasoning(block: Extract<Block, { type: "reasoning" }>): ResponseInputItem | null {
  const id = block.provider_data?.["id"];
  if (block.provider !== "openai" || typeof id !== "string" || !id.startsWith("rs_")) return null;
  const encrypted = block.provider_data?.["encrypted_content"];
  const summary = stringArray(block.provider_data?.["summary"]) ?? (block.text ? [block.text] : []);
  return {
    type: "reasoning",
    id,
    summary: summary.map((text) => ({ type: "summary_text" as const, text })),
    ...(typeof encrypted === "string" ? { encrypted_content: encrypted } : {}),
  };
}

function stringArray(value: unknown): string[] | null {
  return Array.isArray(value) && value.every((v): v is string => typeof v === "string") ? value : null;
}
