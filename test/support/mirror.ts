import { env } from "cloudflare:workers";
import { gunzipText } from "../../src/core/gzip-text";
import { openRunBody, openRunInputs } from "../../src/run-model/compact-run-body";
import { EVENT_PACK_GZ, gunzipPacks, unpackEvents } from "../../src/session/store/event-packs";
import { MESSAGE_PACK_GZ, type MessageRow, unpackMessages } from "../../src/session/store/message-packs";
import type { EventRow } from "../../src/session/store/session-store";

/**
 * The events the D1 mirror holds of a run (`run_id`) or a session (`session_id`), packs unzipped and opened
 * (src/session/store/event-packs.ts), in seq order.
 */
export async function mirroredEventRows(column: "run_id" | "session_id", value: string): Promise<EventRow[]> {
  const { results } = await env.DB.prepare(`SELECT seq, run_id, type, data, created_at FROM events WHERE ${column} = ? ORDER BY seq`)
    .bind(value)
    .all<EventRow>();
  return unpackEvents(await gunzipPacks(results));
}

/** The messages the D1 mirror holds of a session, packs opened (src/session/store/message-packs.ts), in index order. */
export async function mirroredMessages(sessionId: string): Promise<MessageRow[]> {
  const { results } = await env.DB.prepare("SELECT idx, run_id, role, content, created_at FROM messages WHERE session_id = ? ORDER BY idx")
    .bind(sessionId)
    .all<MessageRow>();
  return unpackMessages(results);
}

/**
 * A D1 row as text with everything the mirror gzipped opened (event and message packs, a run
 * body's `_gz`, `gz:` write-once values): what a scan for secrets reads.
 */
export async function openedMirrorRow(row: Record<string, unknown>): Promise<string> {
  const opened: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    if (typeof value !== "string") opened[key] = value;
    else if ((row.type === EVENT_PACK_GZ && key === "data") || (row.role === MESSAGE_PACK_GZ && key === "content"))
      opened[key] = await gunzipText(value);
    else if (value.startsWith("gz:")) opened[key] = await openRunInputs(value);
    else opened[key] = await openRunBody(value).catch(() => value);
  }
  return JSON.stringify(opened);
}
