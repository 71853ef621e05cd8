import { and, desc, eq, lt, or } from "drizzle-orm";
import type { Cursor } from "../core/cursor";
import { TtlCache } from "../core/ttl-cache";
import { database } from "./client";
import { apiKeys } from "./schema";

/** A stored API key: its hash, never the key. */
export type KeyRow = typeof apiKeys.$inferSelect;

/** The key whose SHA-256 hash is `keyHash`, if it exists. */
export async function findKeyByHash(d1: D1Database, keyHash: string): Promise<KeyRow | undefined> {
  return database(d1).select().from(apiKeys).where(eq(apiKeys.keyHash, keyHash)).get();
}

/** Keys found by hash in this isolate; only keys that exist are kept (a new key works at once everywhere). */
const foundKeys = new TtlCache<KeyRow>(1_000);

/**
 * The key whose hash is `keyHash`, served from this isolate's memory for up to `ttlMs` after it
 * was read from D1. `deleteKey` forgets it at once in this isolate; elsewhere within `ttlMs`.
 */
export async function findKeyByHashCached(d1: D1Database, keyHash: string, ttlMs: number): Promise<KeyRow | undefined> {
  const cached = foundKeys.get(keyHash, ttlMs);
  if (cached) return cached;
  const ticket = foundKeys.ticket();
  const key = await findKeyByHash(d1, keyHash);
  if (key && ttlMs > 0) foundKeys.set(keyHash, key, ticket);
  return key;
}

/** Stores a key; false when its tenant already has a key of that name. */
export async function insertKey(d1: D1Database, key: KeyRow): Promise<boolean> {
  const result = await database(d1).insert(apiKeys).values(key).onConflictDoNothing().run();
  return result.meta.changes > 0;
}

/** Up to `limit` keys, newest first, after `cursor`; of one tenant when `tenant` is given. */
export async function listKeys(d1: D1Database, tenant: string | undefined, limit: number, cursor: Cursor | null): Promise<KeyRow[]> {
  const after = cursor
    ? or(lt(apiKeys.createdAt, cursor.createdAt), and(eq(apiKeys.createdAt, cursor.createdAt), lt(apiKeys.id, cursor.id)))
    : undefined;
  return database(d1)
    .select()
    .from(apiKeys)
    .where(and(tenant === undefined ? undefined : eq(apiKeys.tenant, tenant), after))
    .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id))
    .limit(limit)
    .all();
}

/** Deletes a key, which stops authenticating at once (in other isolates within their cache time); false when there was none. */
export async function deleteKey(d1: D1Database, id: string): Promise<boolean> {
  const result = await database(d1).delete(apiKeys).where(eq(apiKeys.id, id)).run();
  foundKeys.deleteWhere((key) => key.id === id);
  return result.meta.changes > 0;
}
