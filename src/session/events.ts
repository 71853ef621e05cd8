/** An event as API.md's envelope. */
export type RunEvent = {
  seq: number;
  type: RunEventType;
  run_id: string;
  session_id: string;
  created_at: string;
  data: Record<string, unknown>;
};

export type RunEventType =
  | "run_started"
  | "model_request_started"
  | "content_delta"
  | "reasoning_delta"
  | "tool_call_started"
  | "tool_call_completed"
  | "tool_call_error"
  | "checkpoint"
  | "retry"
  | "compaction"
  | "model_request_completed"
  | "run_paused"
  | "run_continued"
  | "run_completed"
  | "run_error"
  | "run_cancelled";

const TERMINAL: ReadonlySet<RunEventType> = new Set(["run_completed", "run_error", "run_cancelled", "run_paused"]);

/** Ends a stretch of a run: a stream of that run closes after it. */
export const isTerminal = (type: RunEventType) => TERMINAL.has(type);

type Subscriber = (event: RunEvent) => void;

/** In-memory fan-out of live events to the subscribers of one object. */
export class EventHub {
  private readonly subscribers = new Set<Subscriber>();

  subscribe(subscriber: Subscriber): () => void {
    this.subscribers.add(subscriber);
    return () => this.subscribers.delete(subscriber);
  }

  publish(event: RunEvent): void {
    for (const subscriber of this.subscribers) {
      try {
        subscriber(event);
      } catch {
        this.subscribers.delete(subscriber);
      }
    }
  }
}

const encoder = new TextEncoder();

/** One SSE frame per event (API.md): `id: <seq>`, `event: <type>`, the whole envelope as data. */
export const sseFrame = (event: RunEvent) =>
  encoder.encode(`id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);

const PING = encoder.encode(": ping\n\n");
const HEARTBEAT_MS = 15_000;

/**
 * An SSE byte stream of one run's events, closed after its terminal event. A reader that
 * goes away only unsubscribes: the run goes on.
 */
export function runEventStream(hub: EventHub, runId: string): ReadableStream<Uint8Array> {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    unsubscribe();
    clearInterval(heartbeat);
    writer.close().catch(() => {});
  };
  const write = (chunk: Uint8Array) => {
    if (!closed) writer.write(chunk).catch(close);
  };
  const unsubscribe = hub.subscribe((event) => {
    if (event.run_id !== runId) return;
    write(sseFrame(event));
    if (isTerminal(event.type)) close();
  });
  const heartbeat = setInterval(() => write(PING), HEARTBEAT_MS);
  return readable;
}
