import type {
  ChatCompletionFunctionTool,
  ChatCompletionMessageFunctionToolCall,
  ChatCompletionMessageParam,
} from "openai/resources/chat/completions";
import type { Message } from "../core/messages";
import { stringifyToolArguments, wireToolCallId } from "./tool-calls";
import type { ToolSpec } from "./types";

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
    },
  }));
}

/**
 * Neutral messages as Chat Completions messages, whichever provider produced them: the
 * system prompt first, an assistant message with its text and `tool_calls`, one `tool`
 * message per result. Reasoning is not sent back (compatible endpoints reject or ignore it).
 * Text is sent as plain strings, which every compatible endpoint accepts.
 */
export function toChatMessages(instructions: string | undefined, messages: Message[]): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = instructions ? [{ role: "system", content: instructions }] : [];
  for (const message of messages) {
    const text = message.content.flatMap((b) => (b.type === "text" && b.text ? [b.text] : [])).join("\n\n");
    const calls = message.content.flatMap((b): ChatCompletionMessageFunctionToolCall[] =>
      b.type === "tool_call"
        ? [
            {
              id: wireToolCallId(b.tool_call_id, CHAT_ID_LENGTH),
              type: "function",
              function: { name: b.name, arguments: stringifyToolArguments(b.arguments) },
            },
          ]
        : [],
    );
    for (const block of message.content) {
      if (block.type !== "tool_result") continue;
      out.push({ role: "tool", tool_call_id: wireToolCallId(block.tool_call_id, CHAT_ID_LENGTH), content: block.output });
    }
    if (message.role === "assistant") {
      if (text || calls.length > 0) {
        out.push({ role: "assistant", content: text || null, ...(calls.length > 0 ? { tool_calls: calls } : {}) });
      }
    } else if (text) {
      out.push({ role: "user", content: text });
    }
  }
  return out;
}
