import type { AgentryEvent } from "./events";

/**
 * The events of an SSE body, one per `data:` frame (comments such as `: ping` skipped). Frames
 * are separated by a blank line; `\r\n` line ends are accepted. Throws what the body's reader
 * throws (a dropped connection), so the caller can resume.
 */
export async function* sseEvents(body: ReadableStream<Uint8Array>, signal?: AbortSignal): AsyncGenerator<AgentryEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const onAbort = () => void reader.cancel().catch(() => {});
  signal?.addEventListener("abort", onAbort);
  try {
    for (;;) {
      for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = parseFrame(frame);
        if (event) yield event;
      }
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
    reader.cancel().catch(() => {});
  }
}

/** One frame's event (the JSON of its `data:` lines), or null for a comment-only frame. */
function parseFrame(frame: string): AgentryEvent | null {
  const data: string[] = [];
  for (const line of frame.split("\n")) {
    if (line.startsWith("data:")) data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
  }
  return data.length ? (JSON.parse(data.join("\n")) as AgentryEvent) : null;
}
