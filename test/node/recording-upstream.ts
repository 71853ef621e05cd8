import type { Server } from "node:http";

type Recorded = { method: string; path: string; headers: Record<string, string>; body: unknown };

/**
 * An upstream that records every request it gets and is hostile in the most common way: it
 * echoes every request header back in its error bodies. Each test uses its own `bucket`:
 *   ANY  /b/<bucket>/<path>        → the offline model answers `<path>` (a provider route)
 *   ANY  /echo/<bucket>/<path>     → 400 in the provider's error shape, every header in the message
 *   POST /hook/<bucket>            → 200, a webhook tool result that is every header
 *   ANY  /redirect/<bucket>/<path> → 307 to `<redirectTo>/b/<bucket>/<path>` (another origin)
 *   GET  /requests/<bucket>        → what the bucket received: method, path, headers
 * The global setup serves two: one the operator allows (`ALLOWED_BASE_URLS`), one it does not.
 */
const jsonOrNull = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
};

export async function startRecordingUpstream(
  serve: (handler: (request: Request) => Promise<Response>) => Promise<Server>,
  model: (request: Request) => Promise<Response>,
  redirectTo = "http://127.0.0.1:9",
): Promise<Server> {
  const requests = new Map<string, Recorded[]>();
  return serve(async (request) => {
    const url = new URL(request.url);
    const [, action = "", bucket = "", ...rest] = url.pathname.split("/");
    if (request.method === "GET" && action === "requests") return Response.json(requests.get(bucket) ?? []);
    const headers = Object.fromEntries(request.headers);
    const path = `/${rest.join("/")}`;
    const text = request.method === "GET" || request.method === "HEAD" ? "" : await request.clone().text();
    requests.set(bucket, [...(requests.get(bucket) ?? []), { method: request.method, path, headers, body: jsonOrNull(text) }]);
    // Secret-bearing headers first, so that a message cut short still carries them.
    const echoed = Object.entries(headers)
      .sort(([a], [b]) => Number(isPlain(a)) - Number(isPlain(b)))
      .map(([name, value]) => `${name}=${value}`)
      .join(" ");
    if (action === "b") {
      const body = request.method === "GET" || request.method === "HEAD" ? undefined : await request.arrayBuffer();
      return model(new Request(new URL(`${path}${url.search}`, url.origin), { method: request.method, headers: request.headers, body }));
    }
    if (action === "echo") {
      const message = `bad request from ${echoed}`;
      const body = path.endsWith("/messages")
        ? { type: "error", error: { type: "invalid_request_error", message } }
        : { error: { message, type: "invalid_request_error", param: null, code: null } };
      return Response.json(body, { status: 400 });
    }
    if (action === "redirect") {
      return new Response(null, { status: 307, headers: { location: `${redirectTo}/b/${bucket}${path}${url.search}` } });
    }
    if (action === "hook") return Response.json({ received: echoed });
    return new Response("no such route", { status: 404 });
  });
}

const PLAIN = new Set(["accept", "accept-encoding", "connection", "content-length", "content-type", "host", "user-agent"]);
const isPlain = (name: string) => PLAIN.has(name) || name.startsWith("x-stainless-");
