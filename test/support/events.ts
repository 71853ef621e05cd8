import { exports } from "cloudflare:workers";
import { ADMIN_TOKEN, api, apiRequest } from "./http";
import type { RunEvent } from "./runs";

export type { RunEvent };

/** Parses one SSE frame; null for a comment-only frame (a heartbeat). Checks `id:` and `event:` against the envelope. */
function parseFrame(frame: string): RunEvent | null {
  const fields = new Map<string, string>();
  for (const line of frame.split("\n")) {
    if (line.startsWith(":")) continue;
    const at = line.indexOf(": ");
    if (at > 0) fields.set(line.slice(0, at), line.slice(at + 2));
  }
  const data = fields.get("data");
  if (data === undefined) return null;
  const event = JSON.parse(data) as RunEvent;
  if (String(event.seq) !== fields.get("id") || event.type !== fields.get("event"))
    throw new Error(`SSE frame id/event do not match its envelope: ${frame}`);
  return event;
}

/** Reads an SSE response frame by frame, as a client would, and can hang up mid-stream. */
export class SseReader {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();
  private text = "";
  private done = false;
  /** Comment frames seen (`: ping`). */
  comments = 0;

  constructor(response: Response) {
    if (!response.body) throw new Error("no body");
    this.reader = response.body.getReader();
  }

  /** The next event, or null once the server has closed the stream. */
  async next(): Promise<RunEvent | null> {
    for (;;) {
      const end = this.text.indexOf("\n\n");
      if (end >= 0) {
        const frame = this.text.slice(0, end);
        this.text = this.text.slice(end + 2);
        const event = parseFrame(frame);
        if (event) return event;
        this.comments += 1;
        continue;
      }
      if (this.done) return null;
      const chunk = await this.reader.read();
      if (chunk.done) this.done = true;
      else this.text += this.decoder.decode(chunk.value, { stream: true });
    }
  }

  /** `count` events (fails if the stream ends first). */
  async take(count: number): Promise<RunEvent[]> {
    const events: RunEvent[] = [];
    while (events.length < count) {
      const event = await this.next();
      if (!event) throw new Error(`stream ended after ${events.length} of ${count} events`);
      events.push(event);
    }
    return events;
  }

  /** Events up to and including the first of `type` (fails if the stream ends first). */
  async until(type: RunEvent["type"]): Promise<RunEvent[]> {
    const events: RunEvent[] = [];
    for (;;) {
      const event = await this.next();
      if (!event) throw new Error(`stream ended before a ${type} event`);
      events.push(event);
      if (event.type === type) return events;
    }
  }

  /** Every event until the server closes the stream. */
  async rest(): Promise<RunEvent[]> {
    const events: RunEvent[] = [];
    for (let event = await this.next(); event; event = await this.next()) events.push(event);
    return events;
  }

  /** Hangs up, as a client that loses its connection. */
  async cancel(): Promise<void> {
    await this.reader.cancel();
  }
}

const eventsPath = (agentId: string, runId: string, query = "") => `/v1/agents/${agentId}/runs/${runId}/events${query}`;

/** `GET …/events` as JSON: the stored events after `after`. */
export async function storedEvents(agentId: string, runId: string, after?: number, token: string = ADMIN_TOKEN): Promise<RunEvent[]> {
  const response = await api(eventsPath(agentId, runId, after === undefined ? "" : `?after=${after}`), {}, token);
  if (response.status !== 200) throw new Error(`GET events: ${response.status} ${await response.text()}`);
  return (await response.json<{ data: RunEvent[] }>()).data;
}

/** `GET …/events` as SSE (`Accept: text/event-stream`), optionally resuming with `Last-Event-ID`. */
export function watchRun(
  agentId: string,
  runId: string,
  options: { after?: number; lastEventId?: number; token?: string | null; query?: string } = {},
): Promise<Response> {
  const headers: Record<string, string> = { accept: "text/event-stream" };
  if (options.lastEventId !== undefined) headers["last-event-id"] = String(options.lastEventId);
  const query = options.query ?? (options.after === undefined ? "" : `?after=${options.after}`);
  return api(eventsPath(agentId, runId, query), { headers }, options.token === undefined ? ADMIN_TOKEN : options.token);
}

/** A client's view of a WebSocket: every text message received, in order. */
export class SocketClient {
  readonly messages: string[] = [];
  private waiters: (() => void)[] = [];
  closed: { code: number; reason: string } | null = null;
  private read = 0;

  constructor(readonly ws: WebSocket) {
    ws.accept();
    ws.addEventListener("message", (event) => {
      this.messages.push(typeof event.data === "string" ? event.data : "<binary>");
      this.wake();
    });
    ws.addEventListener("close", (event) => {
      this.closed = { code: event.code, reason: event.reason };
      this.wake();
    });
  }

  private wake() {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter();
  }

  send(message: string): void {
    this.ws.send(message);
  }

  /** The next message not read yet (fails after `timeoutMs`). */
  async nextMessage(timeoutMs = 5000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    while (this.read >= this.messages.length) {
      if (this.closed) throw new Error(`socket closed (${this.closed.code}) while waiting for a message`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no message within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.messages[this.read++] as string;
  }

  /** Reads event messages until one matches `until` (inclusive); fails on a non-event message. */
  async eventsUntil(until: (event: RunEvent) => boolean, timeoutMs = 5000): Promise<RunEvent[]> {
    const events: RunEvent[] = [];
    for (;;) {
      const event = JSON.parse(await this.nextMessage(timeoutMs)) as RunEvent;
      if (typeof event.seq !== "number") throw new Error(`not an event: ${JSON.stringify(event)}`);
      events.push(event);
      if (until(event)) return events;
    }
  }

  /** Nothing arrives for `ms` (returns what did arrive, for the assertion). */
  async quietFor(ms: number): Promise<string[]> {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return this.messages.slice(this.read);
  }

  close(): void {
    this.ws.close(1000, "bye");
  }
}

/** What a browser sends with an upgrade (RFC 6455): a random 16-byte key in base64, version 13. */
export const webSocketHandshake = () => ({
  upgrade: "websocket",
  "sec-websocket-key": btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16)))),
  "sec-websocket-version": "13",
});

/** Upgrades `GET /v1/sessions/{id}/ws` through the Worker; the raw response when it is not a 101. */
export async function connectSocket(
  sessionId: string,
  options: { token?: string | null; query?: string; upgrade?: boolean; headers?: Record<string, string> } = {},
): Promise<{ response: Response; socket: SocketClient | null }> {
  const headers: Record<string, string> = { ...(options.upgrade === false ? {} : webSocketHandshake()), ...options.headers };
  const token = options.token === undefined ? ADMIN_TOKEN : options.token;
  const response = await exports.default.fetch(apiRequest(`/v1/sessions/${sessionId}/ws${options.query ?? ""}`, { headers }, token));
  return { response, socket: response.webSocket ? new SocketClient(response.webSocket) : null };
}

/** Opens a session's WebSocket (fails the test unless the upgrade succeeds). */
export async function openSocket(sessionId: string, token: string = ADMIN_TOKEN): Promise<SocketClient> {
  const { response, socket } = await connectSocket(sessionId, { token });
  if (response.status !== 101 || !socket) throw new Error(`GET ws: ${response.status} ${await response.text()}`);
  return socket;
}

/** Strictly increasing, no repeats. */
export const isStrictlyIncreasing = (seqs: number[]) => seqs.every((seq, i) => i === 0 || seq > (seqs[i - 1] as number));

/** The text of a run's content deltas, in order. */
export const textOf = (events: RunEvent[]) =>
  events
    .filter((e) => e.type === "content_delta")
    .map((e) => e.data.text)
    .join("");
