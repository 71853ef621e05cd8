import { and, inArray, lt } from "drizzle-orm";
import { database } from "./client";
import { events, idempotencyKeys, webhookDeliveries } from "./schema";

/**
 * Deletes the stored events created before `eventsBefore` (and the finished webhook deliveries
 * of that age: `delivered` or `dead`) and the idempotency keys created before `keysBefore`, in
 * one batch; the number of events deleted.
 */
export async function deleteExpired(d1: D1Database, eventsBefore: string, keysBefore: string): Promise<number> {
  const db = database(d1);
  const [deletedEvents] = await db.batch([
    db.delete(events).where(lt(events.createdAt, eventsBefore)),
    db.delete(idempotencyKeys).where(lt(idempotencyKeys.createdAt, keysBefore)),
    db
      .delete(webhookDeliveries)
      .where(and(inArray(webhookDeliveries.status, ["delivered", "dead"]), lt(webhookDeliveries.createdAt, eventsBefore))),
  ]);
  return deletedEvents.meta.changes;
}
