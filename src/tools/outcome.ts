/** What a tool call produced: the text the model sees, and whether it failed. */
export type ToolOutcome = { output: string; is_error: boolean };

/** The outcome of a call its run's cancel aborted; the loop never records it. */
export const CANCELLED = "The run was cancelled while the tool ran";

/**
 * Bytes one tool output may take as stored: UTF-8 of its JSON string (a control character
 * counts 6 bytes, `"` and `\` count 2). A step's results share one transcript row, and D1 and
 * Durable Object SQLite hold at most 2 MB per row, hence MAX_STEP_OUTPUT_BYTES for them all.
 */
export const MAX_TOOL_OUTPUT_BYTES = 100_000;

/** Bytes (as stored) of all the tool outputs of one step together. */
export const MAX_STEP_OUTPUT_BYTES = 1_000_000;

/** UTF-8 bytes of `JSON.stringify(text)`, counted without building it. */
export function storedBytes(text: string): number {
  let bytes = 2;
  for (let i = 0; i < text.length; i++) bytes += charBytes(text, i);
  return bytes;
}

/** Stored bytes of the character at `i`; a surrogate pair counts 4 at its high half and 0 at its low half. */
function charBytes(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === 0x22 || c === 0x5c || c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d) return 2;
  if (c < 0x20) return 6;
  if (c < 0x80) return 1;
  if (c < 0x800) return 2;
  if (c >= 0xd800 && c <= 0xdbff) {
    const next = text.charCodeAt(i + 1);
    return next >= 0xdc00 && next <= 0xdfff ? 4 : 6;
  }
  if (c >= 0xdc00 && c <= 0xdfff) {
    const previous = i > 0 ? text.charCodeAt(i - 1) : 0;
    return previous >= 0xd800 && previous <= 0xdbff ? 0 : 6;
  }
  return 3;
}

/** Cuts a text to at most `maxBytes` stored bytes, with a note saying how much was cut. */
export function capOutput(text: string, maxBytes: number = MAX_TOOL_OUTPUT_BYTES): string {
  if (storedBytes(text) <= maxBytes) return text;
  const room = maxBytes - 100;
  let bytes = 2;
  let end = 0;
  while (end < text.length && bytes + charBytes(text, end) <= room) bytes += charBytes(text, end++);
  // Never end between the halves of a surrogate pair.
  if (end > 0 && end < text.length && charBytes(text, end) === 0) end--;
  return `${text.slice(0, end)}\n[truncated: ${text.length - end} more characters]`;
}

export const toolError = (message: string): ToolOutcome => ({ output: message, is_error: true });

/**
 * Holds a step's outcomes, in call order, to MAX_STEP_OUTPUT_BYTES together: an output that
 * would pass it becomes a short tool error, so the step's transcript row can always be stored.
 */
export function fitStepOutputs<T extends ToolOutcome>(outcomes: T[]): T[] {
  let total = 0;
  return outcomes.map((outcome) => {
    const bytes = storedBytes(outcome.output);
    if (total + bytes <= MAX_STEP_OUTPUT_BYTES) {
      total += bytes;
      return outcome;
    }
    const dropped = `Output dropped: this step's tool outputs together are over ${MAX_STEP_OUTPUT_BYTES} bytes`;
    total += storedBytes(dropped);
    return { ...outcome, output: dropped, is_error: true };
  });
}

/**
 * Reads a response body up to `maxBytes`: its text, and whether there was more (then the text
 * is the part read, and the rest of the body is cancelled unread).
 */
export async function readCapped(response: Response, maxBytes: number = MAX_TOOL_OUTPUT_BYTES): Promise<{ text: string; over: boolean }> {
  if (!response.body) return { text: "", over: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      break;
    }
  }
  const bytes = new Uint8Array(Math.min(size, maxBytes));
  let offset = 0;
  for (const chunk of chunks) {
    const part = chunk.subarray(0, bytes.byteLength - offset);
    bytes.set(part, offset);
    offset += part.byteLength;
  }
  const text = new TextDecoder().decode(bytes);
  return { text, over: size > maxBytes || storedBytes(text) > maxBytes };
}
