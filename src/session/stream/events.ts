import { openSse } from "./sse";

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
  /** Agentry's: the step's final answer missed the output schema; its text is void, a repair call follows. */
  | "output_repair"
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

  /** How many subscribers are listening now. */
  get size(): number {
    return this.subscribers.size;
  }

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

/**
 * An SSE byte stream of one run's live events, closed after its terminal event. A reader that
 * goes away only unsubscribes: the run goes on. (A resume with replay: event-stream.ts.)
 */
export function runEventStream(hub: EventHub, runId: string): ReadableStream<Uint8Array> {
  const { readable, sink } = openSse();
  const unsubscribe = hub.subscribe((event) => {
    if (event.run_id !== runId) return;
    sink.send(event);
    if (isTerminal(event.type)) sink.close();
  });
  sink.onClose(unsubscribe);
  return readable;
}
