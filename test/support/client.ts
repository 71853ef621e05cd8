import { exports } from "cloudflare:workers";
import { AgentryClient, type AgentryClientOptions, type FetchLike } from "../../client/index.ts";
import { ADMIN_TOKEN } from "./http";

/** The Worker, called the way a client's fetch would call it. */
export const workerFetch: FetchLike = (request) => exports.default.fetch(request);

/** A typed client (client/) talking to the Worker in workerd; resumes with no wait between tries. */
export const testClient = (options: Partial<AgentryClientOptions> = {}) =>
  new AgentryClient({ baseUrl: "http://agentry.test", token: ADMIN_TOKEN, fetch: workerFetch, retryDelayMs: 0, ...options });

/**
 * A fetch whose SSE answers are cut after `frames` complete frames (and a few bytes of the next
 * one), as a dropped connection would: the body errors there. `connections` counts the SSE answers.
 */
export function cuttingFetch(frames: number): { fetch: FetchLike; connections: () => number } {
  let connections = 0;
  const fetch: FetchLike = async (request) => {
    const response = await workerFetch(request);
    if (!response.body || !response.headers.get("content-type")?.startsWith("text/event-stream")) return response;
    connections += 1;
    return new Response(cutAfter(response.body, frames), { status: response.status, headers: response.headers });
  };
  return { fetch, connections: () => connections };
}

function cutAfter(body: ReadableStream<Uint8Array>, frames: number): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let text = "";
  let cut = false;
  return new ReadableStream<Uint8Array>({
    // Reads until `frames` frames have come (sending nothing before), sends them, then errors on the next read
    // (an error discards what is still queued, so it comes after the reader took the frames).
    async pull(controller) {
      if (cut) return controller.error(new TypeError("connection reset (test)"));
      for (;;) {
        let at = frames === 0 ? -2 : -1;
        for (let seen = 0; seen < frames; seen++) {
          at = text.indexOf("\n\n", at + 1);
          if (at < 0) break;
        }
        if (at !== -1) {
          controller.enqueue(encoder.encode(text.slice(0, at + 2 + 5))); // the frames, and the start of the next one
          void reader.cancel().catch(() => {});
          cut = true;
          return;
        }
        const { value, done } = await reader.read();
        if (done) {
          controller.enqueue(encoder.encode(text));
          return controller.close();
        }
        text += decoder.decode(value, { stream: true });
      }
    },
    cancel: () => reader.cancel(),
  });
}
