import { z } from "zod";

/**
 * A message of the webhook queue: attempt number `attempt` (the attempts already made) of one
 * delivery. The consumer acts only while the delivery has made exactly that many attempts, so a
 * duplicated or outdated message sends nothing (src/webhooks/consumer.ts).
 */
export const webhookMessageSchema = z.object({
  tenant: z.string(),
  delivery_id: z.string(),
  attempt: z.number().int().nonnegative(),
});

export type WebhookMessage = z.infer<typeof webhookMessageSchema>;
