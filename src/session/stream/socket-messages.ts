import { z } from "zod";
import { fieldsOf } from "../../core/errors";
import type { SessionFailure } from "../../run-model/session-protocol";

/** The exact texts of docs/api.md's keep-alive: answered by the runtime, without waking the object. */
export const PING = '{"type":"ping"}';
export const PONG = '{"type":"pong"}';

/** A client message larger than this is refused unread. */
const MAX_MESSAGE_CHARS = 4096;

/** What a client may send on a session's WebSocket. */
export const clientMessage = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("subscribe"), after: z.number().int().min(0) }),
  z.strictObject({ type: z.literal("ping") }),
]);

export type ClientMessage = z.infer<typeof clientMessage>;

/** A client message, or docs/api.md's error body for it. */
export function parseClientMessage(raw: string | ArrayBuffer): { ok: true; message: ClientMessage } | { ok: false; error: SessionFailure } {
  const refuse = (message: string, path = "message") =>
    ({ ok: false, error: { type: "invalid_request", message, details: { fields: [{ path, message }] } } }) as const;
  if (typeof raw !== "string") return refuse("messages must be text (JSON)");
  if (raw.length > MAX_MESSAGE_CHARS) return refuse(`messages are limited to ${MAX_MESSAGE_CHARS} characters`);
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return refuse("not valid JSON");
  }
  const parsed = clientMessage.safeParse(json);
  if (!parsed.success) {
    const fields = fieldsOf(parsed.error);
    return {
      ok: false,
      error: {
        type: "invalid_request",
        message: `Invalid message: ${fields.map((f) => f.path || "message").join(", ")}`,
        details: { fields },
      },
    };
  }
  return { ok: true, message: parsed.data };
}

/** The frame that answers a bad message (docs/api.md): the socket stays open. */
export const errorFrame = (error: SessionFailure) =>
  JSON.stringify({ type: "error", error: { type: error.type, message: error.message, details: error.details ?? {} } });

/**
 * Acknowledges a subscribe before its replay: a live event that reached the socket between
 * the client's subscribe and this frame is sent again by the replay, so a client drops those.
 */
export const subscribedFrame = (after: number) => JSON.stringify({ type: "subscribed", after });

/** Exhaustiveness check for a switch on a message's `type`. */
export function assertNever(value: never): never {
  throw new Error(`Unexpected value: ${JSON.stringify(value)}`);
}
