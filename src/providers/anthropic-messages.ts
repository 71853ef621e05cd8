import type { ContentBlockParam, MessageParam, TextBlockParam, Tool } from "@anthropic-ai/sdk/resources/messages";
import { toolBlockText, toolNamesById } from "../core/message-text";
import type { Block, MediaBlock, Message } from "../core/messages";
import { isImageType } from "../media/limits";
import { decodeText, isTextFile, mediaNote } from "./media-parts";
import { toolArgumentsObject, wireToolCallId } from "./tool-calls";
import type { MediaData, ToolSpec } from "./types";

/** The system prompt as one text block marked for prompt caching. */
export function toAnthropicSystem(instructions: string | undefined): TextBlockParam[] | undefined {
  if (!instructions) return undefined;
  return [{ type: "text", text: instructions, cache_control: { type: "ephemeral" } }];
}

/** Neutral tools as Anthropic tools. */
export function toAnthropicTools(tools: ToolSpec[]): Tool[] {
  return tools.map((tool) => ({
    name: tool.name,
    ...(tool.description ? { description: tool.description } : {}),
    input_schema: { type: "object", ...tool.parameters },
  }));
}

/** How a request's messages are sent. */
export type AnthropicMessageOptions = {
  /** The request defines tools. Without them Anthropic refuses tool_use / tool_result blocks, so those go as text. */
  tools: boolean;
  /** Marks the last message for prompt caching (a second breakpoint after the system prompt's). */
  cache: boolean;
};

/**
 * Neutral messages as Anthropic messages, whichever provider produced them: role "tool"
 * becomes a user message of `tool_result` blocks, ids are made valid for Anthropic, only
 * Anthropic's own signed thinking goes back (unchanged), empty and whitespace-only text blocks
 * are dropped (Anthropic refuses them). Consecutive messages of one role are merged only where
 * a tool result is involved (tool results first, as Anthropic requires); plain user turns stay
 * separate messages, as the transcript has them (the API accepts consecutive user messages and
 * joins them into one turn), so a reader can still tell the last one apart.
 */
export function toAnthropicMessages(
  messages: Message[],
  media: Record<string, MediaData> = {},
  options: AnthropicMessageOptions = { tools: true, cache: false },
): MessageParam[] {
  const names = options.tools ? null : toolNamesById(messages);
  const out: MessageParam[] = [];
  for (const message of messages) {
    const role = message.role === "assistant" ? "assistant" : "user";
    const blocks = message.content.flatMap((block) => {
      const text = names ? toolBlockText(block, names) : null;
      return text === null ? toAnthropicBlock(block, media) : [{ type: "text" as const, text }];
    });
    if (blocks.length === 0) continue;
    const last = out[out.length - 1];
    const mergeable = (content: ContentBlockParam[]) => role === "assistant" || content.some((b) => b.type === "tool_result");
    if (last && last.role === role && Array.isArray(last.content) && (mergeable(last.content) || mergeable(blocks))) {
      last.content = role === "user" ? orderToolResultsFirst([...last.content, ...blocks]) : [...last.content, ...blocks];
    } else {
      out.push({ role, content: blocks });
    }
  }
  // A conversation a client brought may open with the assistant (a chat UI's greeting); the
  // Messages API wants a user message first (Bedrock and Vertex refuse anything else).
  if (out[0]?.role === "assistant") out.unshift({ role: "user", content: [{ type: "text", text: CONVERSATION_START }] });
  if (options.cache) markLastMessage(out);
  return out;
}

/** The user message put before a history that opens with the assistant. */
export const CONVERSATION_START = "(The conversation starts with the assistant's message.)";

/**
 * Puts a cache breakpoint on the last block of the last message that can carry one (thinking
 * blocks cannot), so the next step or turn reads the whole prefix from the cache.
 */
function markLastMessage(messages: MessageParam[]): void {
  const content = messages.at(-1)?.content;
  if (!Array.isArray(content)) return;
  const index = content.findLastIndex((b) => b.type !== "thinking" && b.type !== "redacted_thinking");
  const block = content[index];
  if (!block || block.type === "thinking" || block.type === "redacted_thinking") return;
  content[index] = { ...block, cache_control: { type: "ephemeral" } };
}

function toAnthropicBlock(block: Block, media: Record<string, MediaData>): ContentBlockParam[] {
  switch (block.type) {
    case "text":
      return block.text.trim() ? [{ type: "text", text: block.text }] : [];
    case "image":
    case "file":
      return [anthropicMedia(block, media[block.media_id])];
    case "tool_call":
      return [
        {
          type: "tool_use",
          id: wireToolCallId(block.tool_call_id),
          name: block.name,
          input: toolArgumentsObject(block.arguments),
        },
      ];
    case "tool_result":
      return [
        {
          type: "tool_result",
          tool_use_id: wireToolCallId(block.tool_call_id),
          content: block.output,
          ...(block.is_error ? { is_error: true } : {}),
        },
      ];
    case "reasoning":
      return anthropicThinking(block);
  }
}

/**
 * Images as base64 `image` blocks; PDFs as base64 `document` blocks; text and Markdown files
 * as `document` blocks with a text source (Anthropic's plain-text documents are `text/plain`),
 * titled with the file's name.
 */
function anthropicMedia(block: MediaBlock, data: MediaData | undefined): ContentBlockParam {
  if (!data) return { type: "text", text: mediaNote(block) };
  const title = block.name ? { title: block.name } : {};
  if (block.type === "image" && isImageType(data.media_type)) {
    return { type: "image", source: { type: "base64", media_type: data.media_type, data: data.data } };
  }
  if (data.media_type === "application/pdf") {
    return { type: "document", source: { type: "base64", media_type: "application/pdf", data: data.data }, ...title };
  }
  if (isTextFile(data.media_type)) {
    return { type: "document", source: { type: "text", media_type: "text/plain", data: decodeText(data) }, ...title };
  }
  return { type: "text", text: mediaNote(block) };
}

/** Thinking blocks must go back exactly as Anthropic signed them; others' reasoning is dropped. */
function anthropicThinking(block: Extract<Block, { type: "reasoning" }>): ContentBlockParam[] {
  if (block.provider !== "anthropic") return [];
  const signature = block.provider_data?.signature;
  if (typeof signature === "string") return [{ type: "thinking", thinking: block.text, signature }];
  const redacted = block.provider_data?.redacted_data;
  if (typeof redacted === "string") return [{ type: "redacted_thinking", data: redacted }];
  return [];
}

/**
 * Whether the request ends inside a tool loop whose assistant turn does not start with a
 * thinking block: a history a client brought, or a loop that began without thinking. With
 * thinking on, Anthropic refuses that ("a final `assistant` message must start with a thinking
 * block"), so such a call goes without `thinking`, as the API's message advises.
 */
export function loopWithoutThinking(messages: MessageParam[]): boolean {
  const last = messages.at(-1);
  if (last?.role !== "user" || !Array.isArray(last.content) || !last.content.some((b) => b.type === "tool_result")) return false;
  const assistant = messages.findLast((message) => message.role === "assistant");
  const first = Array.isArray(assistant?.content) ? assistant.content[0] : undefined;
  return first?.type !== "thinking" && first?.type !== "redacted_thinking";
}

function orderToolResultsFirst(blocks: ContentBlockParam[]): ContentBlockParam[] {
  return [...blocks.filter((b) => b.type === "tool_result"), ...blocks.filter((b) => b.type !== "tool_result")];
}
