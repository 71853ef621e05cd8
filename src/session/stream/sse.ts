/** What an SSE frame carries: an event with its session seq (the frame id) and type (the frame event); a RunEvent is one. */
export type SseEvent = { seq: number; type: string };

const encoder = new TextEncoder();

/** One SSE frame per event (docs/api.md): `id: <seq>`, `event: <type>`, the whole envelope as data. */
export const sseFrame = (event: SseEvent) => encoder.encode(`id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);

const PING = encoder.encode(": ping\n\n");

/** A keep-alive comment goes out this often, so proxies never see an idle stream. */
export const HEARTBEAT_MS = 15_000;

/** The writing end of an SSE byte stream. */
export interface SseSink {
  readonly closed: boolean;
  send(event: SseEvent): void;
  close(): void;
  /** Runs once when the stream closes, whoever closed it (this side, or a reader that went away). */
  onClose(listener: () => void): void;
}

/**
 * Opens an SSE byte stream with a `: ping` heartbeat. A reader that goes away makes the
 * next write fail, which closes the sink: the producer (a run) is never held up by it.
 */
export function openSse(heartbeatMs = HEARTBEAT_MS): { readable: ReadableStream<Uint8Array>; sink: SseSink } {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  const listeners: (() => void)[] = [];
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    for (const listener of listeners) listener();
    writer.close().catch(() => {});
  };
  const write = (chunk: Uint8Array) => {
    if (!closed) writer.write(chunk).catch(close);
  };
  const heartbeat = setInterval(() => write(PING), heartbeatMs);
  const sink: SseSink = {
    get closed() {
      return closed;
    },
    send: (event) => write(sseFrame(event)),
    close,
    onClose: (listener) => {
      if (closed) listener();
      else listeners.push(listener);
    },
  };
  return { readable, sink };
}
