import { errorMessage } from "../core/errors";
import { log } from "../core/log";
import { overdueDeliveries } from "../db/webhooks";
import type { Env } from "../env";
import type { WebhookMessage } from "../webhooks";

/** Deliveries put back on the queue per Cron tick; the rest wait for the next one. */
const SWEEP_BATCH = 100;
/** A delivery this late was lost on its way to the queue (an object or a consumer died, a send failed). */
const OVERDUE_MS = 60_000;

/**
 * The backstop of webhook deliveries: one whose attempt was due more than a minute ago and that
 * is still `pending` or `failed` is sent to the webhook queue again, with the attempt number it
 * waits for (a message still on its way then finds the attempt made and sends nothing).
 */
export async function sweepWebhookDeliveries(env: Env, now: Date): Promise<number> {
  const due = await overdueDeliveries(env.DB, new Date(now.getTime() - OVERDUE_MS).toISOString(), SWEEP_BATCH);
  if (due.length === 0) return 0;
  try {
    await env.WEBHOOKS.sendBatch(
      due.map((d) => ({ body: { tenant: d.tenant, delivery_id: d.id, attempt: d.attempts } satisfies WebhookMessage })),
    );
  } catch (error) {
    log({ event: "webhook_enqueue_failed", delivery_ids: due.map((d) => d.id), message: errorMessage(error) });
  }
  return due.length;
}
