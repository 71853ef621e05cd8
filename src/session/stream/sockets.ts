import { errorMessage } from "../../core/errors";
import { z } from "zod";
import { log } from "../../core/log";
import type { RunEvent } from "./events";
import type { SessionIdentity } from "../../run-model/session-protocol";
import { assertNever, errorFrame, parseClientMessage, PING, PONG, subscribedFrame } from "./socket-messages";

/** Carry the caller's identity from the Worker to the object's `fetch` (only the Worker can reach it). */
const TENANT_HEADER = "x-agentry-tenant";
const SESSION_HEADER = "x-agentry-session";

/** The upgrade request the Worker hands to the session's object; the client's token stays behind. */
export function upgradeRequest(original: Request, identity: SessionIdentity): Request {
  const headers = new Headers(original.headers);
  headers.delete("authorization");
  headers.set(TENANT_HEADER, identity.tenant);
  headers.set(SESSION_HEADER, identity.session_id);
  return new Request("https://session.internal/ws", { headers });
}

/** The identity an upgrade request carries, or null when it is not one. */
export function upgradeIdentity(request: Request): SessionIdentity | null {
  const tenant = request.headers.get(TENANT_HEADER);
  const sessionId = request.headers.get(SESSION_HEADER);
  if (request.headers.get("upgrade")?.toLowerCase() !== "websocket" || !tenant || !sessionId) return null;
  return { tenant, session_id: sessionId };
}

/** What a socket keeps across hibernation: small metadata only. */
const attachmentSchema = z.object({ id: z.string(), tenant: z.string(), session_id: z.string(), last_seq: z.number() });
type Attachment = z.infer<typeof attachmentSchema>;

/** Reads a page of the session's stored events after a seq (empty when there are no more). */
export type ReadEvents = (after: number) => Promise<RunEvent[]>;

/**
 * The session's WebSockets, accepted with the Hibernation API: the object may be evicted
 * from memory while they stay open, and is woken (constructor, then the handler) by a client
 * message. Only the sockets and their attachments survive that, so nothing here assumes
 * in-memory state from before: every socket is found again with `getWebSockets()`.
 */
export class SessionSockets {
  /** Sockets (by attachment id) replaying stored events: live events wait here meanwhile. */
  private readonly replays = new Map<string, RunEvent[]>();
  private readonly cache = new WeakMap<WebSocket, Attachment>();

  constructor(private readonly ctx: DurableObjectState) {
    // Kept by the runtime, which answers the exact ping itself, also while the object hibernates.
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair(PING, PONG));
  }

  /** Accepts a new socket for `identity` and answers the upgrade. */
  accept(identity: SessionIdentity): Response {
    const pair = new WebSocketPair();
    // acceptWebSocket (not server.accept()) is what lets the object hibernate with the socket open.
    this.ctx.acceptWebSocket(pair[1], [identity.session_id]);
    this.save(pair[1], { id: crypto.randomUUID(), tenant: identity.tenant, session_id: identity.session_id, last_seq: 0 });
    return new Response(null, { status: 101, webSocket: pair[0] });
  }

  identityOf(ws: WebSocket): SessionIdentity | null {
    const attachment = this.attachmentOf(ws);
    return attachment && { tenant: attachment.tenant, session_id: attachment.session_id };
  }

  /** Whether a client watches the session over a WebSocket now. */
  isWatched(): boolean {
    return this.ctx.getWebSockets().length > 0;
  }

  /** Sends an event to every socket of the session; a socket whose send fails is dropped. */
  broadcast(event: RunEvent): void {
    const sockets = this.ctx.getWebSockets();
    if (sockets.length === 0) return;
    const text = JSON.stringify(event);
    for (const ws of sockets) {
      const attachment = this.attachmentOf(ws);
      if (!attachment) continue;
      const replay = this.replays.get(attachment.id);
      if (replay) replay.push(event);
      else this.deliver(ws, attachment, event, text);
    }
  }

  /** Handles a client message: a bad one gets an error frame and the socket stays open. */
  async receive(ws: WebSocket, raw: string | ArrayBuffer, read: ReadEvents): Promise<void> {
    const parsed = parseClientMessage(raw);
    if (!parsed.ok) return void this.send(ws, errorFrame(parsed.error));
    const { message } = parsed;
    switch (message.type) {
      case "ping":
        // A ping the auto-response did not match exactly (other spacing) reaches the object.
        this.send(ws, PONG);
        return;
      case "subscribe":
        return this.subscribe(ws, message.after, read);
      default:
        assertNever(message);
    }
  }

  /** The client closed (or the connection failed): reciprocate the close and forget the socket. */
  closed(ws: WebSocket, code: number, reason: string): void {
    const attachment = this.attachmentOf(ws);
    if (attachment) this.replays.delete(attachment.id);
    try {
      // The Hibernation API does not answer a client's Close frame by itself; 1005/1006/1015 cannot be sent.
      ws.close([1005, 1006, 1015].includes(code) ? 1000 : code, reason);
    } catch {
      // already closed
    }
  }

  /** Closes every socket of the session (it was deleted). */
  closeAll(code: number, reason: string): void {
    this.replays.clear();
    for (const ws of this.ctx.getWebSockets()) {
      try {
        ws.close(code, reason);
      } catch {
        // already closed
      }
    }
  }

  /**
   * Replays the stored events after `after`, then goes on live with no gap and no duplicate:
   * events broadcast while the replay is read wait in its queue, and the seq check drops the
   * ones the replay already sent. A later subscribe on the same socket replaces this one.
   */
  private async subscribe(ws: WebSocket, after: number, read: ReadEvents): Promise<void> {
    const start = this.attachmentOf(ws);
    if (!start) return;
    const queued: RunEvent[] = [];
    this.replays.set(start.id, queued);
    let current: Attachment | null = this.save(ws, { ...start, last_seq: after });
    if (!this.send(ws, subscribedFrame(after))) return;
    const active = () => current !== null && this.replays.get(start.id) === queued;
    try {
      for (let page = await read(after); page.length > 0 && active(); page = await read(current?.last_seq ?? after)) {
        for (const event of page) current = current && this.deliver(ws, current, event);
      }
    } catch (error) {
      log({ event: "unhandled_error", message: `socket replay: ${errorMessage(error)}` });
      if (active()) this.send(ws, errorFrame({ type: "internal", message: "The stored events could not be read; subscribe again" }));
    }
    if (!active()) return;
    for (const event of queued) current = current && this.deliver(ws, current, event);
    this.replays.delete(start.id);
  }

  /** Sends one event unless the socket already has it; null when the socket was dropped. */
  private deliver(ws: WebSocket, attachment: Attachment, event: RunEvent, text = JSON.stringify(event)): Attachment | null {
    if (event.seq <= attachment.last_seq) return attachment;
    if (!this.send(ws, text)) return null;
    return this.save(ws, { ...attachment, last_seq: event.seq });
  }

  private send(ws: WebSocket, text: string): boolean {
    try {
      ws.send(text);
      return true;
    } catch {
      const attachment = this.attachmentOf(ws);
      if (attachment) this.replays.delete(attachment.id);
      try {
        ws.close(1011, "send failed");
      } catch {
        // already closed
      }
      return false;
    }
  }

  private save(ws: WebSocket, attachment: Attachment): Attachment {
    ws.serializeAttachment(attachment);
    this.cache.set(ws, attachment);
    return attachment;
  }

  private attachmentOf(ws: WebSocket): Attachment | null {
    const cached = this.cache.get(ws);
    if (cached) return cached;
    const parsed = attachmentSchema.safeParse(ws.deserializeAttachment());
    if (!parsed.success) return null;
    this.cache.set(ws, parsed.data);
    return parsed.data;
  }
}
