import { exports } from "cloudflare:workers";
import { onTestFinished } from "vitest";

/** One HTTP request a client library sent to the Worker, with what the Worker answered. */
export type SentRequest = {
  method: string;
  /** The URL's path, e.g. "/v1/responses". */
  path: string;
  /** The parsed JSON body (undefined when there was none; the raw text when it is not JSON). */
  body: unknown;
  /** The Worker's status. */
  status: number;
  /** The Worker's error body (`{ error: … }`) when the status is 4xx/5xx, else undefined. */
  error?: unknown;
};

function parseBody(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * A `fetch` that hands every request to the Worker (`exports.default.fetch`), as the client
 * libraries' custom `fetch` option does, and records each one in `sent`: method, path, parsed
 * JSON body, and the Worker's status (with its error body when it refused).
 */
export function recordingFetch(sent: SentRequest[]): typeof fetch {
  return async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const text = request.body === null ? "" : await request.clone().text();
    const entry: SentRequest = { method: request.method, path: new URL(request.url).pathname, body: parseBody(text), status: 0 };
    sent.push(entry);
    const response = await exports.default.fetch(request);
    entry.status = response.status;
    if (response.status >= 400) entry.error = parseBody(await response.clone().text());
    return response;
  };
}

/**
 * A fresh record for one test: every request is printed when the test ends (the config shows
 * the output of failing tests only), so a failure shows exactly what the library sent and what
 * Agentry answered.
 */
export function sentRequests(): SentRequest[] {
  const sent: SentRequest[] = [];
  onTestFinished(() => console.log(`requests sent:\n${JSON.stringify(sent, null, 2)}`));
  return sent;
}
