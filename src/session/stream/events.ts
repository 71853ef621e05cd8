import { isTerminal, type RunEventType } from "./event-catalogue";
import { openSse } from "./sse";

export { isTerminal, type EventData, type RunEventType } from "./event-catalogue";

/** A run event: the envelope and its `data`, typed by the event catalogue (event-catalogue.ts). */
export type RunEvent = {
  seq: number;
  type: RunEventType;
  run_id: string;
  session_id: string;
  created_at: string;
  data: Record<string, unknown>;
};

type Subscriber = (event: RunEvent) => void;

/** In-memory fan-out of live events to the subscribers of one object. */
export class EventHub {
  private readonly subscribers = new Set<Subscriber>();
  /** The subscribers that show the events to someone (a stream), not the object's own waiters. */
  private readonly shown = new Set<Subscriber>();

  /** How many subscribers are listening now. */
  get size(): number {
    return this.subscribers.size;
  }

  /** Whether a subscriber shows the events to a client now. */
  get watched(): boolean {
    return this.shown.size > 0;
  }

  /** `internal`: the object's own waiter (a run's stop), which shows nothing to anyone. */
  subscribe(subscriber: Subscriber, { internal = false } = {}): () => void {
    this.subscribers.add(subscriber);
    if (!internal) this.shown.add(subscriber);
    return () => {
      this.subscribers.delete(subscriber);
      this.shown.delete(subscriber);
    };
  }

  publish(event: RunEvent): void {
    for (const subscriber of this.subscribers) {
      try {
        subscriber(event);
      } catch {
        this.subscribers.delete(subscriber);
        this.shown.delete(subscriber);
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
