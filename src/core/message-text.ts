import type { Block, Message } from "./messages";

const argumentsText = (args: unknown): string => (typeof args === "string" ? args : JSON.stringify(args ?? {}));

/**
 * A tool call or tool result as plain text, for requests that may not carry tool blocks (a
 * call without `tools`, the compaction summary's transcript). `names` maps call ids to tool
 * names, so a result says which tool returned it. Other blocks give null.
 */
export function toolBlockText(block: Block, names: ReadonlyMap<string, string>): string | null {
  if (block.type === "tool_call") return `[called tool ${block.name} with ${argumentsText(block.arguments)}]`;
  if (block.type !== "tool_result") return null;
  const name = names.get(block.tool_call_id) ?? "a tool";
  return `[${name} ${block.is_error ? "failed" : "returned"}: ${block.output}]`;
}

/** Tool names by call id, over a history. */
export function toolNamesById(messages: readonly Message[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const message of messages) {
    for (const block of message.content) if (block.type === "tool_call") names.set(block.tool_call_id, block.name);
  }
  return names;
}

/**
 * A history as one plain-text transcript (`User:` / `Assistant:` / `Tool:` paragraphs), tool
 * calls and results written out, media and reasoning left as short notes or out: what a
 * summary request sends, so that it is valid on every provider whatever the history holds.
 */
export function transcriptText(messages: readonly Message[]): string {
  const names = toolNamesById(messages);
  const speaker = { user: "User", assistant: "Assistant", tool: "Tool" } as const;
  return messages
    .map((message) => {
      const parts = message.content.flatMap((block): string[] => {
        if (block.type === "text") return block.text.trim() ? [block.text.trim()] : [];
        if (block.type === "image" || block.type === "file")
          return [`[${block.type} ${block.name ?? block.media_id} (${block.media_type})]`];
        if (block.type === "reasoning") return [];
        const text = toolBlockText(block, names);
        return text === null ? [] : [text];
      });
      return parts.length > 0 ? `${speaker[message.role]}: ${parts.join("\n")}` : "";
    })
    .filter((paragraph) => paragraph !== "")
    .join("\n\n");
}
