import { sleep, type Delivery, type Frame } from "./delivery";

/** One server-sent event as written on the wire; `delta` marks the frames that carry tokens. */
export type { Frame };

/** A frame with an `event:` line (Anthropic, OpenAI Responses): the Anthropic SDK skips frames without one. */
export const namedFrame = (event: string, data: unknown, delta = false): Frame => ({
  text: `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`,
  delta,
});

/** A frame with only a `data:` line (Chat Completions). */
export const dataFrame = (data: unknown, delta = false): Frame => ({
  text: `data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`,
  delta,
});

/** How many frames go out: all of them, or with `cut` everything up to half of the token frames. */
function framesToSend(frames: Frame[], cut: boolean): number {
  if (!cut) return frames.length;
  const deltas = frames.flatMap((frame, index) => (frame.delta ? [index] : []));
  const keep = deltas[Math.max(1, Math.floor(deltas.length / 2)) - 1];
  return keep === undefined ? Math.floor(frames.length / 2) : keep + 1;
}

/**
 * Streams `frames` as `text/event-stream`. Frames before the first token go out at once; the
 * first token waits `slowMs`, each later one `slowMs / 10`. With `cut` the stream closes
 * mid-answer, without its final events; with `failFrame` it stops at the same place and sends that
 * error frame last. An abort of the request (or a cancel by the reader)
 * stops the stream at once.
 */
export function sseResponse(frames: Frame[], delivery: Delivery): Response {
  const encoder = new TextEncoder();
  const failFrame = delivery.failFrame ?? null;
  const end = framesToSend(frames, delivery.cut || failFrame !== null);
  const cancelled = new AbortController();
  let next = 0;
  let tokensSent = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const frame = frames[next];
      if (next >= end || frame === undefined) {
        if (failFrame !== null) controller.enqueue(encoder.encode(failFrame(end).text));
        controller.close();
        return;
      }
      next += 1;
      if (frame.delta && delivery.slowMs > 0) {
        await sleep(tokensSent === 0 ? delivery.slowMs : delivery.slowMs / 10, delivery.signal, cancelled.signal);
      }
      if (frame.delta) tokensSent += 1;
      controller.enqueue(encoder.encode(frame.text));
    },
    cancel() {
      cancelled.abort();
    },
  });
  return new Response(body, {
    headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", ...delivery.headers },
  });
}
