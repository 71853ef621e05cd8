// The provider both systems call: the project's offline model (real Anthropic SSE wire format,
// `[[tool …]]` directives for tool loops) on loopback, behind a fixed latency, recording when
// each request arrived (and its size) and when its answer's first byte, first text token and last byte left.
import { now, sleep } from "./stats.mjs";

/**
 * @typedef {object} ProviderRequest A request the fake provider answered, on the bench's clock (`now()`).
 * @property {number} arrivedAt
 * @property {number | null} firstByteAt
 * @property {number | null} firstTextAt
 * @property {number | null} endedAt
 * @property {number} status
 * @property {number} bytes the request's content-length
 */

/**
 * Starts the fake provider on 127.0.0.1. `setLatency(ms)` sets the wait before each answer;
 * `mark()` and `since(mark)` give the requests recorded after a point.
 */
export async function startFakeProvider() {
  const { serveFetch } = await import("../../test/node/global-setup.ts");
  const { handleMockModel } = await import("../../src/mock-model/index.ts");
  let latencyMs = 0;
  /** @type {ProviderRequest[]} */
  const log = [];
  const server = await serveFetch(async (request) => {
    /** @type {ProviderRequest} */
    const entry = {
      arrivedAt: now(),
      firstByteAt: null,
      firstTextAt: null,
      endedAt: null,
      status: 0,
      bytes: Number(request.headers.get("content-length") ?? 0),
    };
    log.push(entry);
    if (latencyMs > 0) await sleep(latencyMs);
    const response = await handleMockModel(request);
    entry.status = response.status;
    if (!response.body) {
      entry.firstByteAt = entry.endedAt = now();
      return response;
    }
    const decoder = new TextDecoder();
    const body = response.body.pipeThrough(
      new TransformStream({
        transform(chunk, controller) {
          const at = now();
          entry.firstByteAt ??= at;
          if (entry.firstTextAt === null && decoder.decode(chunk).includes('"text_delta"')) entry.firstTextAt = at;
          controller.enqueue(chunk);
        },
        flush() {
          entry.endedAt = now();
        },
      }),
    );
    return new Response(body, { status: response.status, headers: response.headers });
  });
  // Node closes a kept-alive connection after 5 s idle; with 200 runs at once a step can wait
  // longer than that, and workerd may send the next call on a socket Node is closing: a
  // "connection error" of the harness, not of Agentry. Real providers keep idle connections longer.
  server.keepAliveTimeout = 120_000;
  server.headersTimeout = 121_000;
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the fake provider has no port");
  return {
    origin: `http://127.0.0.1:${address.port}`,
    /** @param {number} ms */
    setLatency: (ms) => {
      latencyMs = ms;
    },
    mark: () => log.length,
    /** @param {number} mark */
    since: (mark) => log.slice(mark),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * Splits one run's wall time by the provider's records: before the first model call arrived,
 * the gaps between one answer's last byte and the next call's arrival, after the last answer.
 * (An answer not ended yet counts as ended at 0, as the arithmetic on its null would.)
 * @param {number} startedAt
 * @param {number} endedAt
 * @param {ProviderRequest[]} requests
 */
export function decompose(startedAt, endedAt, requests) {
  const first = requests[0];
  const last = requests.at(-1);
  if (!first || !last) return null;
  let gaps = 0;
  for (const [i, request] of requests.entries()) if (i > 0) gaps += request.arrivedAt - (requests[i - 1]?.endedAt ?? 0);
  return { before: first.arrivedAt - startedAt, gaps, after: endedAt - (last.endedAt ?? 0), calls: requests.length };
}
