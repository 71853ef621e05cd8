import { and, desc, eq, lt, or } from "drizzle-orm";
import type { Cursor } from "../api/pagination";
import { database } from "./client";
import { apiKeys } from "./schema";

/** A stored API key: its hash, never the key. */
export type KeyRow = typeof apiKeys.$inferSelect;

/** The key whose SHA-256 hash is `keyHash`, if it exists. */
export async function findKeyByHash(d1: D1Database, keyHash: string): Promise<KeyRow | undefined> {
  return database(d1).select().from(apiKeys).where(eq(apiKeys.keyHash, keyHash)).get();
}

/** Stores a key; false when its tenant already has a key of that name. */
export async function insertKey(d1: D1Database, key: KeyRow): Promise<boolean> {
  const result = await database(d1).insert(apiKeys).values(key).onConflictDoNothing().run();
  return result.meta.changes > 0;
}

/** Up to `limit` keys, newest first, after `cursor`; of one tenant when `tenant` is given. */
export async function listKeys(
  d1: D1Database,
  tenant: string | undefined,
  limit: number,
  cursor: Cursor | null,
): Promise<KeyRow[]> {
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

/** Deletes a key, which stops authenticating at once; false when there was none. */
export async function deleteKey(d1: D1Database, id: string): Promise<boolean> {
  const result = await database(d1).delete(apiKeys).where(eq(apiKeys.id, id)).run();
  return result.meta.changes > 0;
}
