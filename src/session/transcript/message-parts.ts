import type { Block, Message, ToolCallBlock } from "../../core/messages";

/**
 * The messages a model call sends. A step that never finished (a cancelled run's tool calls
 * without results) stays in the transcript but is not sent: every provider rejects a tool
 * call without its result, or a result without its call.
 */
export function sendableHistory<M extends Message>(messages: M[]): M[] {
  const calls = new Set<string>();
  const results = new Set<string>();
  for (const m of messages) {
    for (const b of m.content) {
      if (b.type === "tool_call") calls.add(b.tool_call_id);
      if (b.type === "tool_result") results.add(b.tool_call_id);
    }
  }
  const keep = (b: Block) =>
    (b.type !== "tool_call" || results.has(b.tool_call_id)) && (b.type !== "tool_result" || calls.has(b.tool_call_id));
  return messages.map((m) => ({ ...m, content: m.content.filter(keep) })).filter((m) => m.content.length > 0);
}

export const toolCallsOf = (message: Message): ToolCallBlock[] => message.content.filter((b): b is ToolCallBlock => b.type === "tool_call");

/** The final text of an assistant message. */
export const textOf = (message: Message): string => message.content.map((b) => (b.type === "text" ? b.text : "")).join("");
