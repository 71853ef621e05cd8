/** The `fetch` shape both SDKs accept as an option. */
export type SdkFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** What an adapter needs to build its SDK client. */
export type SdkClientConfig = {
  apiKey: string;
  baseURL: string;
  /** Extra headers of every call (an AI Gateway's `cf-aig-authorization`, …): secrets like the key. */
  headers?: Record<string, string>;
  /** Set for the in-process offline model; otherwise `fencedFetch`. */
  fetch?: SdkFetch;
};

/** The values of a client config that must never appear in an error message: the key and header values. */
export function secretsOf(config: SdkClientConfig): string[] {
  return [config.apiKey, ...Object.values(config.headers ?? {})];
}

/**
 * The platform `fetch` with redirects refused: a 3xx reaches the SDK as an error status, so a key
 * or header meant for one origin is never re-sent to the origin a redirect names.
 */
export const fencedFetch: SdkFetch = (input, init) => fetch(input, { ...init, redirect: "manual" });

/**
 * A `fetch` that serves requests from an in-process handler, honouring the request's
 * signal the way a real `fetch` does: an abort rejects the pending response and errors its
 * body, even when the handler itself never looks at the signal.
 */
export function inProcessFetch(handler: (request: Request) => Promise<Response>): SdkFetch {
  return async (input, init) => {
    const signal = init?.signal ?? undefined;
    const request = new Request(input, init);
    const response = await untilAborted(handler(request), signal);
    if (!signal || !response.body) return response;
    return new Response(abortableBody(response.body, signal), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

function abortError(): DOMException {
  return new DOMException("The operation was aborted.", "AbortError");
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(abortError());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError());
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

function abortableBody(body: ReadableStream<Uint8Array>, signal: AbortSignal): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await untilAborted(reader.read(), signal);
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (error) {
        void reader.cancel().catch(() => undefined);
        controller.error(error);
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}
