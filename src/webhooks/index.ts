export { consumeWebhooks, WEBHOOKS_QUEUE, type WebhookEnv } from "./consumer";
export { RESPONSE_WEBHOOK_EVENTS, RUN_WEBHOOK_EVENTS, WEBHOOK_EVENT_TYPES, webhookEventsOf, type WebhookEventType } from "./event-types";
export { webhookMessageSchema, type WebhookMessage } from "./message";
export { RETRY_DELAYS_SECONDS, retryDelaySeconds } from "./schedule";
export { newWebhookSecret, signedHeaders } from "./signature";
export { openWebhookSecret, sealWebhookSecret } from "./secret-box";
