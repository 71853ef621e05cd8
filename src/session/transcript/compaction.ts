import type { Message } from "../../core/messages";
import type { Compaction } from "./compaction-store";
import type { StoredMessage } from "../store/session-store";

/** The summary block of docs/api.md's transcript: `{ type: "summary", text, replaces: [from, to] }`. */
export type SummaryBlock = { type: "summary"; text: string; replaces: [number, number] };

/** A transcript message as the API shows it: a stored message, or a compaction summary. */
export type TranscriptMessage = StoredMessage | (Omit<StoredMessage, "content" | "role"> & { role: "user"; content: [SummaryBlock] });

/** Rough token count of what a model call sends (the offline model counts the same way). */
export const estimateTokens = (parts: unknown): number => Math.ceil(JSON.stringify(parts).length / 4);

/**
 * A branch's history with its latest applicable compaction: the summary first, then the
 * messages after the range it replaces. A compaction applies to every branch that holds
 * both ends of its range, since such a branch holds exactly the same messages before it.
 */
export function withCompaction(history: StoredMessage[], compactions: Compaction[]): TranscriptMessage[] {
  const positions = new Map(history.map((m, i) => [m.index, i]));
  const applicable = compactions.filter((c) => positions.has(c.from_index) && positions.has(c.to_index));
  const latest = applicable.reduce<Compaction | null>((best, c) => (best === null || c.to_index > best.to_index ? c : best), null);
  if (!latest) return history;
  const after = history.slice((positions.get(latest.to_index) ?? -1) + 1);
  const summary: TranscriptMessage = {
    index: latest.from_index,
    run_id: latest.run_id,
    role: "user",
    content: [{ type: "summary", text: latest.summary, replaces: [latest.from_index, latest.to_index] }],
    created_at: latest.created_at,
  };
  return [summary, ...after];
}

/** What a model call sends for a compacted history: the summary as a plain text message. */
export function toModelMessages(history: TranscriptMessage[]): Message[] {
  return history.map((m) =>
    m.content[0]?.type === "summary"
      ? { role: "user", content: [{ type: "text", text: `Summary of the conversation so far:\n${m.content[0].text}` }] }
      : { role: m.role, content: (m as StoredMessage).content },
  );
}

/**
 * Where to cut: everything but the last `keep` messages is summarised, moved earlier so that
 * the kept part never starts with tool results whose calls would be summarised away. Null
 * when there is too little to summarise.
 */
export function splitForCompaction(history: TranscriptMessage[], keep: number): number | null {
  let cut = history.length - Math.max(1, keep);
  while (cut > 0 && history[cut]?.role === "tool") cut -= 1;
  return cut >= 2 ? cut : null;
}
