/// <reference path="./server-everything.d.ts" />
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { createServer as createEverything } from "@modelcontextprotocol/server-everything/dist/server/index.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { oauthServer } from "./oauth-server";

/** The bearer token the `/bearer/…` servers take (test/mcp-tools.test.ts stores it as a credential). */
export const MCP_TEST_TOKEN = "mcp-test-token-0123456789";

/** One request the MCP test server received: its JSON-RPC method and what the test checks. */
export type Received = {
  method: string | null;
  tool: string | null;
  authorization: string | null;
  session: string | null;
  status: number;
  /** A GET's `Last-Event-ID` (a resumed stream). */
  last_event_id?: string | null;
};

/** Milliseconds a `/resumable/` server tells the client to wait before resuming a closed stream (its events' `retry`). */
const RETRY_MS = 20;

/**
 * The events of `/resumable/` servers' streams, kept so that a client resuming a closed stream
 * (`GET` with `Last-Event-ID`) gets the ones after it (the SDK's EventStore; ids `<stream>_<n>`).
 */
function eventStore() {
  const events: { id: string; stream: string; message: JSONRPCMessage }[] = [];
  return {
    async storeEvent(stream: string, message: JSONRPCMessage) {
      const id = `${stream}_${String(events.length).padStart(6, "0")}`;
      events.push({ id, stream, message });
      return id;
    },
    async replayEventsAfter(lastEventId: string, { send }: { send: (id: string, message: JSONRPCMessage) => Promise<void> }) {
      const last = events.find((e) => e.id === lastEventId);
      if (!last) return "";
      for (const event of events) if (event.stream === last.stream && event.id > last.id) await send(event.id, event.message);
      return last.stream;
    },
  };
}

/** A tool name over 64 characters with characters the providers refuse (names.ts cuts and hashes it). */
export const LONG_TOOL_NAME = "a.tool.whose.name.is.far.too.long.for.any.provider.to.accept.as.it.is.v2";

/**
 * `@modelcontextprotocol/server-everything` served locally for the MCP tests, plus a few tools of
 * the tests' own on each session (`fail` → isError, `gate` → held at the tool server's gate of the
 * bucket, `restart` → the server forgets every session after answering, `note` → on /oauth/, 403
 * insufficient_scope unless the token holds `notes:write`, `LONG_TOOL_NAME`). Each
 * test uses its own bucket in the path:
 *   /mcp/<bucket>                     Streamable HTTP (POST, GET, DELETE); an unknown session id is 404
 *   /bearer/<bucket>                  the same, 401 without `Authorization: Bearer MCP_TEST_TOKEN`
 *   /sse/<bucket>                     the older HTTP+SSE transport only (a Streamable HTTP POST is 405)
 *   /resumable/<bucket>               Streamable HTTP whose streams can be resumed (SEP-1699): events carry ids and a
 *                                     `retry`; its `break-stream` tool closes the call's stream, then answers
 *                                     (the answer reaches a client that resumes with GET and Last-Event-ID)
 *   /oauth/<bucket>                   the same behind OAuth 2.1 (test/node/oauth-server.ts; its routes under /as/<bucket>)
 *   GET /received/<bucket>?count=N    the requests the bucket received (once there are N)
 *   GET /oauth-events/<bucket>?count=N the OAuth server's token grants for the bucket (once there are N)
 */
export async function startMcpServer(toolServerUrl: string): Promise<Server> {
  const sessions = new Map<string, { transport: WebStandardStreamableHTTPServerTransport; cleanup: () => void }>();
  const legacy = new Map<string, SSEServerTransport>();
  const received = new Map<string, Received[]>();
  let readers: (() => void)[] = [];
  let restartPending = false;
  let origin = "";
  const oauth = oauthServer(() => origin);

  const record = (bucket: string, entry: Received) => {
    received.set(bucket, [...(received.get(bucket) ?? []), entry]);
    const waiting = readers;
    readers = [];
    for (const wake of waiting) wake();
  };

  const newServer = (bucket: string) => {
    const { server, cleanup } = createEverything();
    server.registerTool("fail", { description: "Always fails", inputSchema: {} }, async () => ({
      content: [{ type: "text", text: "the tool failed on purpose" }],
      isError: true,
    }));
    server.registerTool("gate", { description: "Waits for the test's gate", inputSchema: {} }, async () => {
      const answer = await fetch(`${toolServerUrl}/gate/${bucket}`, { method: "POST", body: "{}" });
      return { content: [{ type: "text", text: await answer.text() }] };
    });
    server.registerTool("restart", { description: "Restarts the server after answering", inputSchema: {} }, async () => {
      restartPending = true;
      return { content: [{ type: "text", text: "restarting" }] };
    });
    server.registerTool(
      "note",
      { description: "Writes a note (on /oauth/: needs the notes:write scope)", inputSchema: { text: z.string() } },
      async ({ text }) => ({
        content: [{ type: "text", text: `noted: ${text}` }],
      }),
    );
    server.registerTool(
      "break-stream",
      { description: "Closes the call's stream, then answers", inputSchema: {} },
      async (_args, extra) => {
        extra.closeSSEStream?.();
        // Answered after the client's retry delay (onto its resumed stream), or before a slow client resumes (replayed from the store).
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS * 5));
        return { content: [{ type: "text", text: "answered after the stream was closed" }] };
      },
    );
    server.registerTool(LONG_TOOL_NAME, { description: "A long name", inputSchema: { n: z.number().optional() } }, async () => ({
      content: [{ type: "text", text: "long name called" }],
    }));
    return { server, cleanup };
  };

  const streamable = async (bucket: string, request: Request, resumable: boolean): Promise<Response> => {
    if (restartPending) {
      restartPending = false;
      for (const { transport, cleanup } of sessions.values()) {
        cleanup();
        await transport.close();
      }
      sessions.clear();
    }
    const sessionId = request.headers.get("mcp-session-id");
    if (sessionId) {
      const session = sessions.get(sessionId);
      if (!session)
        return Response.json({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }, { status: 404 });
      return session.transport.handleRequest(request);
    }
    if (request.method !== "POST") return new Response(null, { status: 405 });
    const { server, cleanup } = newServer(bucket);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, { transport, cleanup }),
      ...(resumable ? { eventStore: eventStore(), retryInterval: RETRY_MS } : {}),
    });
    await server.connect(transport);
    return transport.handleRequest(request);
  };

  const handle = async (request: Request, bucket: string, kind: string): Promise<Response> => {
    const url = new URL(request.url);
    if (kind === "oauth-events") return Response.json(await oauth.events(bucket, Number(url.searchParams.get("count") ?? 0)));
    const oauthAnswer = await oauth.handle(request, url.pathname.split("/").slice(1));
    if (oauthAnswer) return oauthAnswer;
    if (kind === "received") {
      const count = Number(url.searchParams.get("count") ?? 0);
      while ((received.get(bucket) ?? []).length < count) await new Promise<void>((resolve) => readers.push(resolve));
      return Response.json(received.get(bucket) ?? []);
    }
    const body = request.method === "POST" ? await request.clone().text() : "";
    const message = parseMessage(body);
    const entry: Received = {
      method: message?.method ?? null,
      tool: message?.method === "tools/call" ? (message.params?.name ?? null) : null,
      authorization: request.headers.get("authorization"),
      session: request.headers.get("mcp-session-id"),
      status: 0,
    };
    let response: Response;
    if (kind === "oauth" && !oauth.authorized(bucket, request.headers.get("authorization"))) {
      response = oauth.unauthorized(bucket);
    } else if (kind === "oauth" && entry.tool === "note" && !oauth.scopeOf(entry.authorization).includes("notes:write")) {
      response = oauth.insufficientScope(bucket, "mcp:read notes:write");
    } else if (kind === "bearer" && request.headers.get("authorization") !== `Bearer ${MCP_TEST_TOKEN}`) {
      response = Response.json(
        { error: "invalid_token" },
        { status: 401, headers: { "www-authenticate": 'Bearer error="invalid_token"' } },
      );
    } else if (kind === "sse") {
      response = new Response("Method Not Allowed", { status: 405 });
    } else {
      response = await streamable(bucket, request, kind === "resumable");
    }
    entry.status = response.status;
    if (request.method === "POST") record(bucket, entry);
    if (request.method === "GET") record(bucket, { ...entry, method: "GET", last_event_id: request.headers.get("last-event-id") });
    return response;
  };

  const server = createHttpServer((req, res) => void route(req, res));
  const route = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", `http://${req.headers.host}`);
    const [, kind = "", bucket = ""] = url.pathname.split("/");
    if (kind === "sse" && (req.method === "GET" || url.searchParams.has("sessionId"))) return legacySse(req, res, bucket, url);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(name, value);
    const abort = new AbortController();
    res.on("close", () => abort.abort());
    const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
    try {
      const response = await handle(new Request(url, { method: req.method, headers, body, signal: abort.signal }), bucket, kind);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body) for await (const chunk of response.body) res.write(chunk);
      res.end();
    } catch {
      res.destroy();
    }
  };

  /** The older transport: GET opens the event stream (its `endpoint` event names where to POST), POST ?sessionId= sends. */
  const legacySse = async (req: IncomingMessage, res: ServerResponse, bucket: string, url: URL) => {
    if (req.method === "GET") {
      const transport = new SSEServerTransport(`/sse/${bucket}`, res);
      legacy.set(transport.sessionId, transport);
      res.on("close", () => legacy.delete(transport.sessionId));
      await newServer(bucket).server.connect(transport);
      return;
    }
    const transport = legacy.get(url.searchParams.get("sessionId") ?? "");
    if (!transport) {
      res.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString();
    const message = parseMessage(text);
    record(bucket, {
      method: message?.method ?? null,
      tool: message?.method === "tools/call" ? (message.params?.name ?? null) : null,
      authorization: req.headers.authorization ?? null,
      session: null,
      status: 202,
    });
    await transport.handlePostMessage(req, res, JSON.parse(text));
  };

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  origin = typeof address === "object" && address ? `http://127.0.0.1:${address.port}` : "";
  return server;
}

function parseMessage(body: string): { method?: string; params?: { name?: string } } | null {
  try {
    const value: unknown = JSON.parse(body);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as { method?: string; params?: { name?: string } })
      : null;
  } catch {
    return null;
  }
}
