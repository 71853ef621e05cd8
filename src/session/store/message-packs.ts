import { gunzipText, gzipText } from "../../core/gzip-text";
import { messageInserted, mirrorMessagePack } from "./mirror-statements";
import type { MirrorStatement } from "./session-store";

/**
 * Messages as the D1 mirror keeps them: the messages one batch carries, gzipped into one row (a
 * row of D1 costs a write for itself and one for its key, and about 80 bytes of columns beside
 * its content). The row is keyed by its last message's index, its `role` is MESSAGE_PACK_GZ and
 * its `content` the base64 gzip of the JSON array of the messages (MessageRow, `content` as the
 * JSON text the object stores). A message alone stays a row of its own; rows written before packs
 * stay as they are. The object's own transcript is unchanged (one row per message).
 */
export const MESSAGE_PACK_GZ = "message_pack_gz";

/** Characters of message content per pack (D1 allows 2 MB per row; the gzip of incompressible text is a third larger in base64). */
const PACK_CHARS = 256_000;

/** A message row as D1 holds it (`content` JSON text). */
export type MessageRow = { idx: number; run_id: string; role: string; content: string; created_at: string };

type Inserted = NonNullable<ReturnType<typeof messageInserted>>;

async function packOf(members: Inserted[]): Promise<MirrorStatement | null> {
  const [first] = members;
  const last = members.at(-1);
  if (first === undefined || last === undefined) return null;
  if (members.length === 1) return mirrorMessagePack(first.tenant, first.sessionId, first, first.role, first.content);
  const rows: MessageRow[] = members.map((m) => ({
    idx: m.idx,
    run_id: m.runId,
    role: m.role,
    content: m.content,
    created_at: m.createdAt,
  }));
  return mirrorMessagePack(last.tenant, last.sessionId, last, MESSAGE_PACK_GZ, await gzipText(JSON.stringify(rows)));
}

/**
 * A batch's statements with its message inserts packed: each session's messages (in the order
 * the batch carries them) become packs within PACK_CHARS, put where the session's first message
 * insert was. Nothing in a batch reads messages, so their place among the other statements does
 * not matter; a batch is one transaction, so a pack lands whole or not at all.
 */
export async function packMessages(statements: MirrorStatement[]): Promise<MirrorStatement[]> {
  const bySession = new Map<string, Inserted[]>();
  for (const statement of statements) {
    const inserted = messageInserted(statement);
    if (inserted === null) continue;
    const key = `${inserted.tenant}\u0000${inserted.sessionId}`;
    bySession.set(key, [...(bySession.get(key) ?? []), inserted]);
  }
  if (![...bySession.values()].some((members) => members.length > 1)) return statements;
  const packsOf = new Map<string, MirrorStatement[]>();
  for (const [key, members] of bySession) {
    const packs: MirrorStatement[] = [];
    let chunk: Inserted[] = [];
    let size = 0;
    const close = async () => {
      const pack = await packOf(chunk);
      if (pack !== null) packs.push(pack);
      chunk = [];
      size = 0;
    };
    for (const member of members) {
      if (chunk.length > 0 && size + member.content.length > PACK_CHARS) await close();
      chunk.push(member);
      size += member.content.length;
    }
    await close();
    packsOf.set(key, packs);
  }
  const result: MirrorStatement[] = [];
  for (const statement of statements) {
    const inserted = messageInserted(statement);
    if (inserted === null) {
      result.push(statement);
      continue;
    }
    const key = `${inserted.tenant}\u0000${inserted.sessionId}`;
    const packs = packsOf.get(key);
    if (packs === undefined) continue;
    result.push(...packs);
    packsOf.delete(key);
  }
  return result;
}

/**
 * D1's message rows of a session, read in index order, packs opened, in index order, each index
 * once: a batch D1 took whose outbox entries the object did not remove (it died in between) is
 * sent again, and may then pack the same messages with later ones under another index.
 */
export async function unpackMessages(rows: MessageRow[]): Promise<MessageRow[]> {
  if (!rows.some((row) => row.role === MESSAGE_PACK_GZ)) return rows;
  const byIndex = new Map<number, MessageRow>();
  for (const row of rows) {
    if (row.role !== MESSAGE_PACK_GZ) {
      if (!byIndex.has(row.idx)) byIndex.set(row.idx, row);
      continue;
    }
    for (const member of JSON.parse(await gunzipText(row.content)) as MessageRow[]) {
      if (!byIndex.has(member.idx)) byIndex.set(member.idx, member);
    }
  }
  return [...byIndex.values()].sort((a, b) => a.idx - b.idx);
}
