import { and, eq } from "drizzle-orm";
import { database } from "./client";
import { idempotencyKeys } from "./schema";

/** A stored `Idempotency-Key`: the request's fingerprint and what it created (JSON, or null while it runs). */
export type IdempotencyKeyRow = typeof idempotencyKeys.$inferSelect;

const one = (tenant: string, key: string) => and(eq(idempotencyKeys.tenant, tenant), eq(idempotencyKeys.key, key));

/** Stores the key; false when the tenant already holds it (the row's primary key makes this atomic). */
export async function insertIdempotencyKey(d1: D1Database, row: IdempotencyKeyRow): Promise<boolean> {
  const result = await database(d1).insert(idempotencyKeys).values(row).onConflictDoNothing().run();
  return result.meta.changes === 1;
}

/** The tenant's stored key, if any. */
export async function findIdempotencyKey(d1: D1Database, tenant: string, key: string): Promise<IdempotencyKeyRow | undefined> {
  return database(d1).select().from(idempotencyKeys).where(one(tenant, key)).get();
}

/** Records what the key's request created. */
export async function setIdempotencyResult(d1: D1Database, tenant: string, key: string, result: string): Promise<void> {
  await database(d1).update(idempotencyKeys).set({ result }).where(one(tenant, key)).run();
}

/** Gives the key back; with `createdAt`, only if it is still the row stored then (an expired one, not a newer claim). */
export async function deleteIdempotencyKey(d1: D1Database, tenant: string, key: string, createdAt?: string): Promise<void> {
  const stored = createdAt === undefined ? undefined : eq(idempotencyKeys.createdAt, createdAt);
  await database(d1)
    .delete(idempotencyKeys)
    .where(and(one(tenant, key), stored))
    .run();
}
