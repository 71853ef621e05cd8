// The provider both systems call: the project's offline model (real Anthropic SSE wire format,
// `[[tool …]]` directives for tool loops) on loopback, behind a fixed latency, recording when
// each request arrived (and its size) and when its answer's first byte, first text token and last byte left.
import { now, sleep } from "./stats.mjs";

/**
 * Starts the fake provider on 127.0.0.1. `setLatency(ms)` sets the wait before each answer;
 * `mark()` and `since(mark)` give the requests recorded after a point.
 */
export async function startFakeProvider() {
  const { serveFetch } = await import("../../test/node/global-setup.ts");
  const { handleMockModel } = await import("../../src/mock-model/index.ts");
  let latencyMs = 0;
  const log = [];
  const server = await serveFetch(async (request) => {
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
  const { port } = server.address();
  return {
    origin: `http://127.0.0.1:${port}`,
    setLatency: (ms) => {
      latencyMs = ms;
    },
    mark: () => log.length,
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
 */
export function decompose(startedAt, endedAt, requests) {
  const first = requests[0];
  const last = requests.at(-1);
  if (!first || !last) return null;
  let gaps = 0;
  for (let i = 1; i < requests.length; i += 1) gaps += requests[i].arrivedAt - requests[i - 1].endedAt;
  return { before: first.arrivedAt - startedAt, gaps, after: endedAt - last.endedAt, calls: requests.length };
}
