/** One server-sent event as written, and whether it carries a piece of the answer (a delta). */
export type Frame = { text: string; delta: boolean };

/** How an answer goes out: `[[slow MS]]` pacing, `[[cut]]` truncation, and the caller's abort. */
export type Delivery = {
  slowMs: number;
  cut: boolean;
  /** `[[stream_error]]`: the error frame that ends the stream halfway; given how many frames went before it. */
  failFrame?: ((sent: number) => Frame) | null;
  signal: AbortSignal;
  /** Extra response headers (request ids). */
  headers: Record<string, string>;
};

const abortReason = (signal: AbortSignal): unknown => signal.reason ?? new DOMException("The operation was aborted.", "AbortError");

/** Waits `ms`, rejecting with the abort reason as soon as any of `signals` aborts. */
export function sleep(ms: number, ...signals: AbortSignal[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const aborted = signals.find((signal) => signal.aborted);
    if (aborted) return reject(abortReason(aborted));
    const onAbort = (event: Event) => {
      clearTimeout(timer);
      for (const signal of signals) signal.removeEventListener("abort", onAbort);
      const source = event.target instanceof AbortSignal ? event.target : signals[0];
      reject(source ? abortReason(source) : new DOMException("Aborted", "AbortError"));
    };
    const timer = setTimeout(() => {
      for (const signal of signals) signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    for (const signal of signals) signal.addEventListener("abort", onAbort);
  });
}

/**
 * A non-streaming answer: waits `slowMs` first; with `cut`, the body stops halfway through the
 * JSON text (what a client sees when the connection drops while the body is read).
 */
export async function jsonResponse(body: unknown, delivery: Delivery): Promise<Response> {
  if (delivery.slowMs > 0) await sleep(delivery.slowMs, delivery.signal);
  const text = JSON.stringify(body);
  return new Response(delivery.cut ? text.slice(0, Math.floor(text.length / 2)) : text, {
    headers: { "content-type": "application/json", ...delivery.headers },
  });
}
