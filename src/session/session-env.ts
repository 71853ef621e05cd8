import type { ProviderEnv } from "../providers";
import type { RunMessage } from "../run-model";
import type { WebhookMessage } from "../webhooks/message";
import type { LedgerEnv } from "../budgets";
import type { McpOAuthEnv } from "../mcp/oauth-credential-client";

/**
 * The bindings, variables and secrets a session's object uses (the Worker's `Env`, src/env.ts,
 * extends it): the object depends on these, never on the Worker's whole environment.
 */
export interface SessionEnv extends ProviderEnv, LedgerEnv, McpOAuthEnv {
  DB: D1Database;
  /** Images and files of runs' input, keyed `tenant/session_id/media_id` (src/media). */
  MEDIA: R2Bucket;
  /** Background runs (`{ tenant, session_id, run_id }` messages). */
  RUNS: Queue<RunMessage>;
  /** Lifecycle webhook deliveries (`{ tenant, delivery_id, attempt }` messages; src/webhooks). */
  WEBHOOKS: Queue<WebhookMessage>;
  ENVIRONMENT?: string;
  /** Seconds after which a pending run whose queue message never came is started anyway. */
  QUEUE_FALLBACK_SECONDS?: string;
  /** Days stored events are kept in D1 (and in the object's own log). */
  EVENT_RETENTION_DAYS?: string;
  /** Milliseconds an isolate serves API keys and credentials from memory (10 000; 0 = off; src/core/settings.ts). */
  LOOKUP_CACHE_MS?: string;
  WEBHOOK_SECRET?: string;
  /** 32 random bytes in base64: encrypts tenants' provider credentials (src/credentials). */
  CREDENTIALS_KEY?: string;
  /** `"1"`: count storage rows for the bench (src/core/storage-meter.ts); never set in production. */
  STORAGE_METER?: string;
}
