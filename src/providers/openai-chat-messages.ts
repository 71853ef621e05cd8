import { isStrictSchema } from "./strict-schema";
import type {
  ChatCompletionContentPart,
  ChatCompletionFunctionTool,
  ChatCompletionMessageFunctionToolCall,
  ChatCompletionMessageParam,
} from "openai/resources/chat/completions";
import type { MediaBlock, Message } from "../core/messages";
import { dataUrl, framedText, isTextFile, mediaNote } from "./media-parts";
import { openaiImageDetail } from "./openai-images";
import { stringifyToolArguments, wireToolCallId } from "./tool-calls";
import type { MediaData, ToolSpec } from "./types";

/** OpenAI limits Chat Completions tool call ids to 40 characters. */
const CHAT_ID_LENGTH = 40;

/** Neutral tools as Chat Completions function tools. */
export function toChatTools(tools: ToolSpec[]): ChatCompletionFunctionTool[] {
  return tools.map((tool) => ({
    type: "function",
    function: {
      name: tool.name,
      ...(tool.description ? { description: tool.description } : {}),
      parameters: tool.parameters,
      ...(tool.strict === true && isStrictSchema(tool.parameters) ? { strict: true } : {}),
    },
  }));
}

/**
 * Neutral messages as Chat Completions messages, whichever provider produced them: the
 * system prompt first, an assistant message with its text and `tool_calls`, one `tool`
 * message per result. Reasoning is not sent back (compatible endpoints reject or ignore it).
 * Text is sent as plain strings, which every compatible endpoint accepts.
 *
 * OpenAI refuses a `tool_calls` entry not answered by the `tool` messages right after it, and
 * a `tool` message that answers no call of the assistant message before it; so only calls
 * whose result is in the next message are sent, and only results of those calls (a call left
 * without result, as by a cancelled turn, is dropped with its message's other parts kept).
 */
export function toChatMessages(
  instructions: string | undefined,
  messages: Message[],
  media: Record<string, MediaData> = {},
): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = instructions ? [{ role: "system", content: instructions }] : [];
  let answerable = new Set<string>();
  messages.forEach((message, index) => {
    const text = message.content.flatMap((b) => (b.type === "text" && b.text ? [b.text] : [])).join("\n\n");
    for (const block of message.content) {
      if (block.type !== "tool_result" || !answerable.has(block.tool_call_id)) continue;
      out.push({ role: "tool", tool_call_id: wireToolCallId(block.tool_call_id, CHAT_ID_LENGTH), content: block.output });
    }
    answerable = new Set();
    if (message.role === "assistant") {
      const results = resultIds(messages[index + 1]);
      const answered = message.content.flatMap((b) => (b.type === "tool_call" && results.has(b.tool_call_id) ? [b] : []));
      answerable = new Set(answered.map((call) => call.tool_call_id));
      const calls = answered.map(
        (call): ChatCompletionMessageFunctionToolCall => ({
          id: wireToolCallId(call.tool_call_id, CHAT_ID_LENGTH),
          type: "function",
          function: { name: call.name, arguments: stringifyToolArguments(call.arguments) },
        }),
      );
      if (text || calls.length > 0) {
        out.push({ role: "assistant", content: text || null, ...(calls.length > 0 ? { tool_calls: calls } : {}) });
      }
    } else if (message.content.some((b) => b.type === "image" || b.type === "file")) {
      out.push({ role: "user", content: chatUserParts(message, media) });
    } else if (text) {
      out.push({ role: "user", content: text });
    }
  });
  return out;
}

/** The tool call ids a message answers. */
function resultIds(message: Message | undefined): Set<string> {
  return new Set(message?.content.flatMap((b) => (b.type === "tool_result" ? [b.tool_call_id] : [])) ?? []);
}

/** A user message with media as content parts, in block order (text-only messages stay plain strings). */
function chatUserParts(message: Message, media: Record<string, MediaData>): ChatCompletionContentPart[] {
  return message.content.flatMap((block): ChatCompletionContentPart[] => {
    if (block.type === "text") return block.text ? [{ type: "text", text: block.text }] : [];
    if (block.type === "image" || block.type === "file") return [chatMedia(block, media[block.media_id])];
    return [];
  });
}

/**
 * Images as `image_url` data URLs (`detail: "high"` where openai-images.ts says so, an animated
 * GIF as a note); PDFs as `file` parts (`file_data` data URL + `filename`);
 * text and Markdown files as a framed text part, which every compatible endpoint reads
 * (few of them take `file` parts).
 */
function chatMedia(block: MediaBlock, data: MediaData | undefined): ChatCompletionContentPart {
  if (!data) return { type: "text", text: mediaNote(block) };
  if (block.type === "image") {
    const detail = openaiImageDetail(block, data);
    if (detail === null) return { type: "text", text: mediaNote(block) };
    return { type: "image_url", image_url: { url: dataUrl(data), ...(detail === "high" ? { detail } : {}) } };
  }
  if (isTextFile(data.media_type)) return { type: "text", text: framedText(block, data) };
  return { type: "file", file: { file_data: dataUrl(data), filename: block.name ?? block.media_id } };
}
