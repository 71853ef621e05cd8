import { createHmac } from "node:crypto";
import type { Server } from "node:http";
import { webhookReceiver } from "./webhook-receiver";

/** The webhook secret the test Worker signs with (vitest.config.ts). */
const WEBHOOK_SECRET = "test-webhook-secret";

type RecordedCall = {
  body: unknown;
  idempotency_key: string | null;
  signature_valid: boolean;
  timestamp: string | null;
};

/**
 * A webhook receiver for tool tests. Each test uses its own `bucket` in the path:
 *   POST /echo/<bucket>        → 200 `{ "echo": <arguments> }`
 *   POST /fail/<bucket>        → 500 "tool exploded"
 *   POST /slow/<bucket>?ms=N   → waits N ms, then 200 "slow done"
 *   POST /hold/<bucket>?ms=N   → holds the call until its caller hangs up, or N ms (10 000) pass: 200 "held done"
 *   GET  /held/<bucket>        → answers once the bucket's held call has arrived
 *   GET  /ended/<bucket>       → answers once it has ended: `{ "outcome": "aborted" | "answered" }`
 *   POST /gate/<bucket>        → waits until the test opens the bucket's gate, then 200 "gate opened"
 *   POST /open/<bucket>        → opens the gate: held and later gate calls answer (not recorded)
 *   ANY  /redirect/<bucket>?to=URL&status=N → N (302) with Location: URL (relative to this server)
 *   POST /big/<bucket>?bytes=N → 200 with N bytes of "x"
 *   GET  /calls/<bucket>       → the calls the bucket received, in order
 *   GET  /calls/<bucket>?count=N → the same, once the bucket has received at least N calls
 *   GET  /media/<kind>         → png (a 1×1 PNG), text (text/plain), big (a 6 MB "PNG"),
 *                                redirect (302 to /media/png), missing (404): image URL tests
 *   /hook, /hook-secret, /hooks → a lifecycle webhook receiver (webhook-receiver.ts)
 */
export async function startToolServer(serve: (handler: (request: Request) => Promise<Response>) => Promise<Server>): Promise<Server> {
  const calls = new Map<string, RecordedCall[]>();
  const holds = new Map<string, Hold>();
  const holdOf = (bucket: string) => {
    const hold = holds.get(bucket) ?? newHold();
    holds.set(bucket, hold);
    return hold;
  };
  /** Waiting `?count=` readers, checked whenever a call is recorded. */
  let readers: (() => void)[] = [];
  const gates = new Map<string, { opened: Promise<void>; open: () => void }>();
  const gateOf = (bucket: string) => {
    let gate = gates.get(bucket);
    if (!gate) {
      let open = () => {};
      const opened = new Promise<void>((resolve) => (open = resolve));
      gate = { opened, open };
      gates.set(bucket, gate);
    }
    return gate;
  };
  const receiver = webhookReceiver();
  return serve(async (request) => {
    const url = new URL(request.url);
    const [, action = "", bucket = ""] = url.pathname.split("/");
    if (action === "hook" || action === "hook-secret" || action === "hooks") return receiver(request, action, bucket, url);
    if (request.method === "GET" && action === "calls") {
      const count = Number(url.searchParams.get("count") ?? "0");
      while ((calls.get(bucket)?.length ?? 0) < count) await new Promise<void>((resolve) => readers.push(resolve));
      return Response.json(calls.get(bucket) ?? []);
    }
    if (request.method === "GET" && action === "media") return mediaResponse(bucket, url);
    if (request.method === "GET" && action === "held") return holdOf(bucket).arrived.then(() => new Response("held"));
    if (request.method === "GET" && action === "ended") return holdOf(bucket).ended.then((outcome) => Response.json({ outcome }));
    if (request.method === "POST" && action === "open") {
      gateOf(bucket).open();
      return new Response("opened");
    }
    const raw = await request.text();
    const timestamp = request.headers.get("x-agentry-timestamp");
    const expected = `sha256=${createHmac("sha256", WEBHOOK_SECRET).update(`${timestamp}.${raw}`).digest("hex")}`;
    let body: unknown = raw;
    try {
      body = JSON.parse(raw);
    } catch {
      // recorded as text
    }
    const list = calls.get(bucket) ?? [];
    list.push({
      body,
      idempotency_key: request.headers.get("idempotency-key"),
      signature_valid: request.headers.get("x-agentry-signature") === expected,
      timestamp,
    });
    calls.set(bucket, list);
    const waiting = readers;
    readers = [];
    for (const wake of waiting) wake();
    if (action === "fail") return new Response("tool exploded", { status: 500 });
    if (action === "redirect") {
      const location = new URL(url.searchParams.get("to") ?? "/", url).toString();
      return new Response(null, { status: Number(url.searchParams.get("status") ?? "302"), headers: { location } });
    }
    if (action === "big") return new Response("x".repeat(Number(url.searchParams.get("bytes") ?? "0")));
    if (action === "slow") {
      await new Promise((r) => setTimeout(r, Number(url.searchParams.get("ms") ?? "1000")));
      return new Response("slow done");
    }
    if (action === "gate") {
      await gateOf(bucket).opened;
      return new Response("gate opened");
    }
    if (action === "hold") return held(holdOf(bucket), request, Number(url.searchParams.get("ms") ?? "10000"));
    const args = typeof body === "object" && body !== null && "arguments" in body ? body.arguments : null;
    return Response.json({ echo: args });
  });
}

/** A held webhook call: whether it has arrived, and how it ended. */
type Hold = { arrived: Promise<void>; arrive: () => void; ended: Promise<HoldOutcome>; end: (outcome: HoldOutcome) => void };
type HoldOutcome = "aborted" | "answered";

function newHold(): Hold {
  let arrive = () => {};
  let end: (outcome: HoldOutcome) => void = () => {};
  const arrived = new Promise<void>((resolve) => (arrive = resolve));
  const ended = new Promise<HoldOutcome>((resolve) => (end = resolve));
  return { arrived, arrive, ended, end };
}

/** Holds a call until its caller aborts it (the connection closes) or `ms` pass. */
async function held(hold: Hold, request: Request, ms: number): Promise<Response> {
  hold.arrive();
  const outcome = await new Promise<HoldOutcome>((resolve) => {
    const timer = setTimeout(() => resolve("answered"), ms);
    request.signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve("aborted");
    });
  });
  hold.end(outcome);
  return new Response("held done");
}

/** A 1×1 PNG. */
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "base64");

function mediaResponse(kind: string, url: URL): Response {
  switch (kind) {
    case "png":
      // A wrong Content-Type on purpose: the format comes from the bytes.
      return new Response(PNG, { headers: { "content-type": "application/octet-stream" } });
    case "text":
      return new Response("not an image", { headers: { "content-type": "text/plain" } });
    case "big": {
      const bytes = new Uint8Array(Number(url.searchParams.get("mb") ?? "6") * 1024 * 1024);
      bytes.set(PNG);
      return new Response(bytes, { headers: { "content-type": "image/png" } });
    }
    case "redirect":
      return new Response(null, { status: 302, headers: { location: new URL("/media/png", url).toString() } });
    default:
      return new Response("no such media", { status: 404 });
  }
}
