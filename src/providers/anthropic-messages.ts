import type {
  ContentBlockParam,
  MessageParam,
  TextBlockParam,
  Tool,
} from "@anthropic-ai/sdk/resources/messages";
import type { Block, Message } from "../core/messages";
import { toolArgumentsObject, wireToolCallId } from "./tool-calls";
import type { ToolSpec } from "./types";

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

/**
 * Neutral messages as Anthropic messages, whichever provider produced them: role "tool"
 * becomes a user message of `tool_result` blocks, ids are made valid for Anthropic, only
 * Anthropic's own signed thinking goes back (unchanged). Consecutive messages of one role
 * are merged only where a tool result is involved (tool results first, as Anthropic
 * requires); plain user turns stay separate messages, as the transcript has them (the API
 * accepts consecutive user messages), so a reader can still tell the last one apart.
 */
export function toAnthropicMessages(messages: Message[]): MessageParam[] {
  const out: MessageParam[] = [];
  for (const message of messages) {
    const role = message.role === "assistant" ? "assistant" : "user";
    const blocks = message.content.flatMap(toAnthropicBlock);
    if (blocks.length === 0) continue;
    const last = out[out.length - 1];
    const mergeable = (content: ContentBlockParam[]) => role === "assistant" || content.some((b) => b.type === "tool_result");
    if (last && last.role === role && Array.isArray(last.content) && (mergeable(last.content) || mergeable(blocks))) {
      last.content = role === "user" ? orderToolResultsFirst([...last.content, ...blocks]) : [...last.content, ...blocks];
    } else {
      out.push({ role, content: blocks });
    }
  }
  return out;
}

function toAnthropicBlock(block: Block): ContentBlockParam[] {
  switch (block.type) {
    case "text":
      return block.text ? [{ type: "text", text: block.text }] : [];
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

/** Thinking blocks must go back exactly as Anthropic signed them; others' reasoning is dropped. */
function anthropicThinking(block: Extract<Block, { type: "reasoning" }>): ContentBlockParam[] {
  if (block.provider !== "anthropic") return [];
  const signature = block.provider_data?.["signature"];
  if (typeof signature === "string") return [{ type: "thinking", thinking: block.text, signature }];
  const redacted = block.provider_data?.["redacted_data"];
  if (typeof redacted === "string") return [{ type: "redacted_thinking", data: redacted }];
  return [];
}

function orderToolResultsFirst(blocks: ContentBlockParam[]): ContentBlockParam[] {
  return [...blocks.filter((b) => b.type === "tool_result"), ...blocks.filter((b) => b.type !== "tool_result")];
}
