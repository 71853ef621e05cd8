/** What a tool call produced: the text the model sees, and whether it failed. */
export type ToolOutcome = { output: string; is_error: boolean };

/** Tool outputs are capped so that a transcript row stays far below D1's 2 MB row limit. */
export const MAX_TOOL_OUTPUT_CHARS = 100_000;

export function capOutput(text: string): string {
  if (text.length <= MAX_TOOL_OUTPUT_CHARS) return text;
  return `${text.slice(0, MAX_TOOL_OUTPUT_CHARS)}\n[truncated: ${text.length - MAX_TOOL_OUTPUT_CHARS} more characters]`;
}

export const toolError = (message: string): ToolOutcome => ({ output: message, is_error: true });
