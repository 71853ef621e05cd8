import { isStrictSchema } from "./strict-schema";
import type { FunctionTool, ResponseInputContent, ResponseInputItem } from "openai/resources/responses/responses";
import type { Block, MediaBlock, Message, TextBlock } from "../core/messages";
import { dataUrl, mediaNote } from "./media-parts";
import { openaiImageDetail } from "./openai-images";
import { stringifyToolArguments, wireToolCallId } from "./tool-calls";
import type { MediaData, ToolSpec } from "./types";

/** Neutral tools as Responses function tools (not strict: our schemas are plain JSON Schema). */
export function toResponsesTools(tools: ToolSpec[]): FunctionTool[] {
  return tools.map((tool) => ({
    type: "function",
    name: tool.name,
    description: tool.description ?? null,
    parameters: tool.parameters,
    // OpenAI refuses strict mode for a schema outside its subset: such a tool is checked by Agentry alone.
    strict: tool.strict === true && isStrictSchema(tool.parameters),
  }));
}

/** How the input is sent: `reasoning` when the model reasons and reasoning items may go back. */
export type ResponsesInputOptions = { reasoning: boolean };

/**
 * Neutral messages as Responses input items, whichever provider produced them, in block
 * order: text runs become messages (an assistant message OpenAI gave keeps its `msg_` id and
 * phase), tool calls `function_call` items keyed by `call_id` (our tool_call_id; `id` only when
 * it is the real `fc_` id OpenAI gave), tool results `function_call_output` items. Reasoning
 * goes back only when it is OpenAI's own item, with its encrypted content (requests are
 * `store: false`), on a reasoning model, right before the item that followed it.
 */
export function toResponsesInput(
  messages: Message[],
  media: Record<string, MediaData> = {},
  options: ResponsesInputOptions = { reasoning: false },
): ResponseInputItem[] {
  const items: ResponseInputItem[] = [];
  for (const message of messages) {
    if (message.role !== "assistant") {
      items.push(...userItems(message.content, media));
      continue;
    }
    items.push(...pairReasoning(assistantItems(message.content), options.reasoning));
  }
  return items;
}

/** A user or tool message: text and media in one user message per run, tool results as outputs. */
function userItems(blocks: Block[], media: Record<string, MediaData>): ResponseInputItem[] {
  const items: ResponseInputItem[] = [];
  let parts: ResponseInputContent[] = [];
  const flush = () => {
    if (parts.length > 0) items.push({ type: "message", role: "user", content: parts });
    parts = [];
  };
  for (const block of blocks) {
    if (block.type === "text") {
      if (block.text) parts.push({ type: "input_text", text: block.text });
    } else if (block.type === "image" || block.type === "file") {
      // Media is user input: it stays in the user message, in order with its text.
      parts.push(responsesMedia(block, media[block.media_id]));
    } else {
      flush();
      const item = toItem(block);
      if (item) items.push(item);
    }
  }
  flush();
  return items;
}

/** An assistant message: its output items in order, text blocks of one OpenAI message together again. */
function assistantItems(blocks: Block[]): ResponseInputItem[] {
  const items: ResponseInputItem[] = [];
  let texts: TextBlock[] = [];
  const flush = () => {
    const sent = texts.filter((b) => b.text);
    if (sent.length > 0) items.push(assistantMessage(sent));
    texts = [];
  };
  for (const block of blocks) {
    if (block.type === "text") {
      const first = texts[0];
      if (first !== undefined && messageIdOf(first) !== messageIdOf(block)) flush();
      texts.push(block);
    } else if (block.type !== "image" && block.type !== "file") {
      flush();
      const item = toItem(block);
      if (item) items.push(item);
    }
  }
  flush();
  return items;
}

/** OpenAI's own message id of a text block (`msg_…`), if it has one. */
function messageIdOf(block: TextBlock): string | null {
  const id = block.provider_data?.id;
  return typeof id === "string" && id.startsWith("msg_") ? id : null;
}

function assistantMessage(blocks: TextBlock[]): ResponseInputItem {
  const first = blocks[0];
  const id = first ? messageIdOf(first) : null;
  if (id === null) return { type: "message", role: "assistant", content: blocks.map((b) => b.text).join("\n\n") };
  const phase = first?.provider_data?.phase;
  return {
    type: "message",
    id,
    role: "assistant",
    status: "completed",
    content: blocks.map((b) => ({ type: "output_text" as const, text: b.text, annotations: [] })),
    ...(phase === "commentary" || phase === "final_answer" ? { phase } : {}),
  };
}

/**
 * Keeps a reasoning item only where the API accepts it: on a reasoning model, with its
 * encrypted content, directly followed by an item with its own id (the API refuses "Item 'rs_…'
 * of type 'reasoning' was provided without its required following item", and with
 * `store: false` a reasoning item without its encrypted content is "not found"). The items after
 * a dropped reasoning item go without their ids, so nothing points the API at the reasoning
 * they came with.
 */
function pairReasoning(items: ResponseInputItem[], reasoning: boolean): ResponseInputItem[] {
  const kept: ResponseInputItem[] = [];
  let dropped = false;
  items.forEach((item, index) => {
    if (item.type === "reasoning") {
      const next = items[index + 1];
      dropped = !(reasoning && item.encrypted_content && next !== undefined && hasOwnId(next));
      if (!dropped) kept.push(item);
    } else {
      kept.push(dropped ? withoutId(item) : item);
    }
  });
  return kept;
}

function hasOwnId(item: ResponseInputItem): boolean {
  return (item.type === "message" || item.type === "function_call") && "id" in item && typeof item.id === "string";
}

function withoutId(item: ResponseInputItem): ResponseInputItem {
  if (item.type === "function_call") {
    const { id: _id, ...rest } = item;
    return rest;
  }
  if (item.type === "message" && item.role === "assistant" && "id" in item) {
    const text = item.content.flatMap((part) => (part.type === "output_text" ? [part.text] : [])).join("\n\n");
    return { type: "message", role: "assistant", content: text };
  }
  return item;
}

/** Images as `input_image` data URLs (openai-images.ts picks the detail); files (PDF, text, Markdown) as `input_file` with `file_data` and `filename`. */
function responsesMedia(block: MediaBlock, data: MediaData | undefined): ResponseInputContent {
  if (!data) return { type: "input_text", text: mediaNote(block) };
  if (block.type === "image") {
    const detail = openaiImageDetail(block, data);
    return detail === null ? { type: "input_text", text: mediaNote(block) } : { type: "input_image", image_url: dataUrl(data), detail };
  }
  return { type: "input_file", file_data: dataUrl(data), filename: block.name ?? block.media_id };
}

function toItem(block: Exclude<Block, { type: "text" | "image" | "file" }>): ResponseInputItem | null {
  switch (block.type) {
    case "tool_call": {
      const id = block.provider_data?.id;
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

/** OpenAI's own reasoning item; other providers' reasoning (Anthropic thinking …) is not sent. */
function openAIReasoning(block: Extract<Block, { type: "reasoning" }>): ResponseInputItem | null {
  const id = block.provider_data?.id;
  if (block.provider !== "openai" || typeof id !== "string" || !id.startsWith("rs_")) return null;
  const encrypted = block.provider_data?.encrypted_content;
  const summary = stringArray(block.provider_data?.summary) ?? (block.text ? [block.text] : []);
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
