import { ApiError, type FieldError } from "../core/errors";
import type { Block, MediaBlock, Message } from "../core/messages";
import { parseInput, resolveInput, type ContentPart, type MediaContext, type ResolvedPart } from "../media";
import type { InputPart } from "../session";

/**
 * A message of a conversation a client brings to a new session (`/v1/responses` without
 * `previous_response_id`): a user message with its parts as given (their media not stored yet)
 * and each part's field path in the request, or a provider-neutral message.
 */
export type BroughtMessage = { role: "user"; parts: ContentPart[]; paths: string[] } | Message;

const isUser = (message: BroughtMessage): message is Extract<BroughtMessage, { parts: ContentPart[] }> => "parts" in message;

/** Bytes one seeded message may take as stored: a message is one row, and a row holds at most 2 MB. */
const MAX_MESSAGE_BYTES = 1_000_000;

/** An error of `parseInput` on the history's media, its paths (`input.K.…`) as the request's own. */
function renamed(error: unknown, paths: string[]): unknown {
  if (!(error instanceof ApiError) || !Array.isArray(error.details.fields)) return error;
  const fields = (error.details.fields as FieldError[]).map((field) => {
    const [, index, rest] = /^input\.(\d+)(.*)$/.exec(field.path) ?? [];
    const path = index === undefined ? field.path : `${paths[Number(index)] ?? "input"}${(rest ?? "").replace(/^\.(data|url)$/, "")}`;
    return { ...field, path };
  });
  return new ApiError(error.type, error.message, { ...error.details, fields });
}

/**
 * Checks a brought history before anything is stored: the size of each message, and its user
 * messages' images and files as a run's input is checked (fetched when given by URL). Returns
 * the media, in order, ready to store with the turn's.
 */
export async function checkBroughtHistory(history: BroughtMessage[], context: MediaContext): Promise<ResolvedPart[]> {
  const resolved: ResolvedPart[] = [];
  for (const [index, message] of history.entries()) {
    const bytes = new TextEncoder().encode(JSON.stringify(isUser(message) ? message.parts : message.content)).byteLength;
    if (bytes > MAX_MESSAGE_BYTES) {
      const path = isUser(message) ? (message.paths[0] ?? "input") : "input";
      const text = `message ${index} of the conversation is ${bytes} bytes, over the limit of ${MAX_MESSAGE_BYTES}`;
      throw new ApiError("payload_too_large", text, { fields: [{ path, message: text }] });
    }
    if (!isUser(message)) continue;
    // Each earlier user message is checked as the input it once was: its own parts and media limits.
    const media = message.parts.flatMap((part, position) =>
      part.type === "text" ? [] : [{ part, path: message.paths[position] ?? "input" }],
    );
    if (media.length === 0) continue;
    try {
      resolved.push(
        ...(await resolveInput(
          parseInput(
            media.map(({ part }) => part),
            context,
          ),
          context,
        )),
      );
    } catch (error) {
      throw renamed(
        error,
        media.map(({ path }) => path),
      );
    }
  }
  return resolved;
}

/** The brought history as transcript messages, its media parts replaced by their stored references, in order. */
export function seededHistory(history: BroughtMessage[], stored: InputPart[]): Message[] {
  let next = 0;
  return history.map((message): Message => {
    if (!isUser(message)) return message;
    const content = message.parts.map((part): Block => (part.type === "text" ? part : (stored[next++] as MediaBlock)));
    return { role: "user", content };
  });
}
