import { errorMessage } from "../../core/errors";
import { log } from "../../core/log";
import { isTerminal, type EventHub, type RunEvent } from "./events";
import { openSse } from "./sse";

export type ReplayOptions = {
  hub: EventHub;
  runId: string;
  /** Events with a seq above this are sent. */
  after: number;
  /** The next page of the run's stored events after a seq; an empty page ends the replay. */
  read: (after: number) => Promise<RunEvent[]>;
  /** Whether the run's current stretch is still going on (asked right after subscribing). */
  isLive: () => boolean;
};

/**
 * SSE of a run's stored events after `after`, then of its live events until the terminal
 * event of its current stretch; when the stretch had already ended, the stream closes after
 * the replay. A reader that goes away only unsubscribes: the run goes on.
 */
export function replayStream(options: ReplayOptions): ReadableStream<Uint8Array> {
  const { readable, sink } = openSse();
  let last = options.after;
  let replaying = true;
  const queued: RunEvent[] = [];
  const send = (event: RunEvent) => {
    if (event.seq <= last) return;
    last = event.seq;
    sink.send(event);
  };
  // Subscribe before reading the stored events: whatever is emitted while they are read waits
  // in `queued`, and the seq check drops the copy that the read returned as well. Seqs are
  // published in order, so "above the last seq sent" is exactly "not sent yet".
  const unsubscribe = options.hub.subscribe((event) => {
    if (event.run_id !== options.runId) return;
    if (replaying) {
      queued.push(event);
      return;
    }
    send(event);
    if (isTerminal(event.type)) sink.close();
  });
  sink.onClose(unsubscribe);
  const live = options.isLive();

  const replay = async () => {
    for (let page = await options.read(last); page.length > 0 && !sink.closed; page = await options.read(last)) {
      // A stretch that ended while the replay was read ends the stream at its terminal event.
      const end = queued.find((e) => isTerminal(e.type))?.seq ?? Number.POSITIVE_INFINITY;
      for (const event of page) {
        if (event.seq > end) return;
        send(event);
      }
    }
  };
  replay()
    .then(() => {
      for (const event of queued) {
        send(event);
        if (isTerminal(event.type)) return sink.close();
      }
      replaying = false;
      // A stretch that had ended has nothing more to tail, unless a new one began meanwhile.
      if (!live && queued.length === 0) sink.close();
    })
    .catch((error: unknown) => {
      // The client reconnects with its Last-Event-ID and gets the rest.
      log({ event: "unhandled_error", message: `event replay: ${errorMessage(error)}` });
      sink.close();
    });
  return readable;
}
