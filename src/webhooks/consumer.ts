import { errorMessage } from "../core/errors";
import { log } from "../core/log";
import { findDeliveryToSend, recordAttempt, type DeliveryStatus } from "../db/webhooks";
import type { SessionEnv } from "../session/session-env";
import { webhookMessageSchema, type WebhookMessage } from "./message";
import { attemptTimeoutMs, retryDelaySeconds, retryScale } from "./schedule";
import { attemptDelivery, type AttemptOutcome } from "./send";
import { openWebhookSecret } from "./secret-box";

/** The webhook queue's name (wrangler.toml): the Worker's queue handler sends its batches here. */
export const WEBHOOKS_QUEUE = "agentry-webhooks";

/** What the webhook consumer uses of the Worker's environment. */
export type WebhookEnv = Pick<SessionEnv, "DB" | "WEBHOOKS" | "ENVIRONMENT" | "CREDENTIALS_KEY"> & {
  WEBHOOK_RETRY_SCALE?: string;
  WEBHOOK_TIMEOUT_MS?: string;
};

/**
 * The consumer of the webhook queue. Each message is one attempt of one delivery; the next
 * attempt of a failed one is a new message sent with the schedule's delay (`delaySeconds`),
 * carrying its attempt number, so that a duplicated or outdated message is recognised and sends
 * nothing. A message is retried by the queue only when D1 or the queue itself failed.
 */
export async function consumeWebhooks(batch: MessageBatch<unknown>, env: WebhookEnv): Promise<void> {
  // Messages are independent (each is one delivery's attempt): a slow receiver does not hold up the others.
  await Promise.all(batch.messages.map((message) => consumeOne(message, env)));
}

async function consumeOne(message: Message<unknown>, env: WebhookEnv): Promise<void> {
  const parsed = webhookMessageSchema.safeParse(message.body);
  if (!parsed.success) {
    log({ event: "queue_message", run_id: null, outcome: "malformed webhook message dropped" });
    message.ack();
    return;
  }
  try {
    await attempt(env, parsed.data);
    message.ack();
  } catch (error) {
    log({ event: "queue_message", run_id: null, outcome: `webhook ${parsed.data.delivery_id} retry: ${errorMessage(error)}` });
    message.retry({ delaySeconds: Math.min(60, 2 ** message.attempts) });
  }
}

/**
 * Makes attempt `message.attempt + 1` of the delivery, if it is still due: its webhook exists
 * (deleting one deletes its deliveries), it is `pending` or `failed`, and no other attempt was
 * made since the message was sent. Records it, then schedules the next one or declares it dead.
 */
async function attempt(env: WebhookEnv, message: WebhookMessage): Promise<void> {
  const delivery = await findDeliveryToSend(env.DB, message.tenant, message.delivery_id);
  if (!delivery || delivery.attempts !== message.attempt) return;
  if (delivery.status !== "pending" && delivery.status !== "failed") return;
  let outcome: AttemptOutcome;
  try {
    const secret = await openWebhookSecret(env.CREDENTIALS_KEY, delivery.tenant, delivery.webhookId, delivery.ciphertext);
    outcome = await attemptDelivery(
      delivery,
      { url: delivery.url, secret },
      { environment: env.ENVIRONMENT, timeoutMs: attemptTimeoutMs(env) },
    );
  } catch (error) {
    outcome = { ok: false, status_code: null, outcome: errorMessage(error) };
  }
  const failedInRound = delivery.attempts + 1 - delivery.roundStart;
  const delay = outcome.ok ? null : retryDelaySeconds(failedInRound);
  const seconds = delay === null ? null : Math.round(delay * retryScale(env));
  const status: DeliveryStatus = outcome.ok ? "delivered" : seconds === null ? "dead" : "failed";
  const nextAttemptAt = seconds === null ? null : new Date(Date.now() + seconds * 1000).toISOString();
  log({
    event: "webhook_attempt",
    delivery_id: delivery.id,
    webhook_id: delivery.webhookId,
    attempt: delivery.attempts + 1,
    outcome: status === "dead" ? `${outcome.outcome}; dead` : outcome.outcome,
    status_code: outcome.status_code,
  });
  const recorded = await recordAttempt(env.DB, delivery.id, delivery.attempts, { status, statusCode: outcome.status_code, nextAttemptAt });
  if (!recorded || seconds === null) return;
  const next: WebhookMessage = { tenant: delivery.tenant, delivery_id: delivery.id, attempt: delivery.attempts + 1 };
  // A failed send is not retried here (the attempt is recorded): the Cron sweep sends overdue deliveries.
  try {
    await env.WEBHOOKS.send(next, { delaySeconds: seconds });
  } catch (error) {
    log({ event: "webhook_enqueue_failed", delivery_ids: [delivery.id], message: errorMessage(error) });
  }
}
