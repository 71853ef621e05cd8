import { and, desc, eq, inArray, isNotNull, lt, or, sql } from "drizzle-orm";
import type { Cursor } from "../core/cursor";
import { database } from "./client";
import { webhookDeliveries, webhooks } from "./schema";

/** A stored webhook: its signing secret only as `ciphertext`. */
export type WebhookRow = typeof webhooks.$inferSelect;
export type DeliveryRow = typeof webhookDeliveries.$inferSelect;
/** A delivery with what an attempt needs of its webhook. */
export type DeliveryToSend = DeliveryRow & { url: string; ciphertext: string };

export type DeliveryStatus = "pending" | "delivered" | "failed" | "dead";

const one = (tenant: string, id: string) => and(eq(webhooks.tenant, tenant), eq(webhooks.id, id));

export async function insertWebhook(d1: D1Database, row: WebhookRow): Promise<void> {
  await database(d1).insert(webhooks).values(row).run();
}

export async function findWebhook(d1: D1Database, tenant: string, id: string): Promise<WebhookRow | undefined> {
  return database(d1).select().from(webhooks).where(one(tenant, id)).get();
}

/** Up to `limit` of the tenant's webhooks, newest first, after `cursor`. */
export async function listWebhooks(d1: D1Database, tenant: string, limit: number, cursor: Cursor | null): Promise<WebhookRow[]> {
  const after = cursor
    ? or(lt(webhooks.createdAt, cursor.createdAt), and(eq(webhooks.createdAt, cursor.createdAt), lt(webhooks.id, cursor.id)))
    : undefined;
  return database(d1)
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.tenant, tenant), after))
    .orderBy(desc(webhooks.createdAt), desc(webhooks.id))
    .limit(limit)
    .all();
}

/** Deletes the webhook and its deliveries (a queued attempt then finds nothing and sends nothing); false when it did not exist. */
export async function deleteWebhook(d1: D1Database, tenant: string, id: string): Promise<boolean> {
  const db = database(d1);
  const [deleted] = await db.batch([
    db.delete(webhooks).where(one(tenant, id)),
    db.delete(webhookDeliveries).where(and(eq(webhookDeliveries.tenant, tenant), eq(webhookDeliveries.webhookId, id))),
  ]);
  return deleted.meta.changes > 0;
}

const deliveryOf = (tenant: string, webhookId: string, id: string) =>
  and(eq(webhookDeliveries.tenant, tenant), eq(webhookDeliveries.webhookId, webhookId), eq(webhookDeliveries.id, id));

/** Up to `limit` of a webhook's deliveries, newest first, after `cursor`. */
export async function listDeliveries(
  d1: D1Database,
  tenant: string,
  webhookId: string,
  limit: number,
  cursor: Cursor | null,
): Promise<DeliveryRow[]> {
  const c = webhookDeliveries;
  const after = cursor ? or(lt(c.createdAt, cursor.createdAt), and(eq(c.createdAt, cursor.createdAt), lt(c.id, cursor.id))) : undefined;
  return database(d1)
    .select()
    .from(c)
    .where(and(eq(c.tenant, tenant), eq(c.webhookId, webhookId), after))
    .orderBy(desc(c.createdAt), desc(c.id))
    .limit(limit)
    .all();
}

/**
 * Starts a new schedule for a delivery (redeliver): `pending`, due now, its schedule counted from
 * the attempts made so far. Answers the attempts made (the attempt number of its queue message),
 * or null when the webhook has no such delivery.
 */
export async function restartDelivery(d1: D1Database, tenant: string, webhookId: string, id: string, now: string): Promise<number | null> {
  const row = await database(d1)
    .update(webhookDeliveries)
    .set({ status: "pending", nextAttemptAt: now, roundStart: sql`${webhookDeliveries.attempts}` })
    .where(deliveryOf(tenant, webhookId, id))
    .returning({ attempts: webhookDeliveries.attempts })
    .get();
  return row?.attempts ?? null;
}

/** A delivery and its webhook's URL and secret, if both still exist. */
export async function findDeliveryToSend(d1: D1Database, tenant: string, id: string): Promise<DeliveryToSend | undefined> {
  const row = await database(d1)
    .select({ delivery: webhookDeliveries, url: webhooks.url, ciphertext: webhooks.ciphertext })
    .from(webhookDeliveries)
    .innerJoin(webhooks, and(eq(webhooks.tenant, webhookDeliveries.tenant), eq(webhooks.id, webhookDeliveries.webhookId)))
    .where(and(eq(webhookDeliveries.tenant, tenant), eq(webhookDeliveries.id, id)))
    .get();
  return row ? { ...row.delivery, url: row.url, ciphertext: row.ciphertext } : undefined;
}

/**
 * Records attempt number `attempts + 1` of a delivery, only if no other attempt was recorded
 * since it was read (`attempts` unchanged): false when one was (a duplicated message raced it).
 */
export async function recordAttempt(
  d1: D1Database,
  id: string,
  readAttempts: number,
  outcome: { status: DeliveryStatus; statusCode: number | null; nextAttemptAt: string | null },
): Promise<boolean> {
  const result = await database(d1)
    .update(webhookDeliveries)
    .set({
      attempts: readAttempts + 1,
      status: outcome.status,
      lastStatusCode: outcome.statusCode,
      nextAttemptAt: outcome.nextAttemptAt,
    })
    .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.attempts, readAttempts)))
    .run();
  return result.meta.changes > 0;
}

/** Deliveries whose next attempt was due before `before` and that are still waiting for it (the sweep's). */
export async function overdueDeliveries(
  d1: D1Database,
  before: string,
  limit: number,
): Promise<Pick<DeliveryRow, "id" | "tenant" | "attempts">[]> {
  const c = webhookDeliveries;
  return database(d1)
    .select({ id: c.id, tenant: c.tenant, attempts: c.attempts })
    .from(c)
    .where(and(inArray(c.status, ["pending", "failed"]), isNotNull(c.nextAttemptAt), lt(c.nextAttemptAt, before)))
    .orderBy(c.nextAttemptAt)
    .limit(limit)
    .all();
}
