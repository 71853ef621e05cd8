import type { ProviderEnv } from "./providers";
import type { RunMessage, SessionObject } from "./session";

/** Bindings, variables and secrets of the Worker (wrangler.toml, `.dev.vars`, `wrangler secret put`). */
export interface Env extends ProviderEnv {
  DB: D1Database;
  SESSION: DurableObjectNamespace<SessionObject>;
  /** Requests per token (wrangler.toml `[[ratelimits]]`); absent = not limited. */
  RATE_LIMITER?: RateLimit;
  /** Images and files of runs' input, keyed `tenant/session_id/media_id` (src/media). */
  MEDIA: R2Bucket;
  /** Cloudflare Images (wrangler.toml `[images]`): scales input images over a vendor limit down; absent = they are refused. */
  IMAGES?: ImagesBinding;
  /** Background runs (`{ tenant, session_id, run_id }` messages). */
  RUNS: Queue<RunMessage>;
  /** Static assets (wrangler.toml `[assets]`): the pinned /docs viewer. */
  ASSETS: Fetcher;
  ENVIRONMENT?: string;
  /** Seconds after which a pending run whose queue message never came is started anyway. */
  QUEUE_FALLBACK_SECONDS?: string;
  /** Seconds without progress after which the Cron sweeper resumes a run. */
  STALE_RUN_SECONDS?: string;
  /** Sweeps without progress after which a run ends in error. */
  MAX_RUN_SWEEPS?: string;
  /** Days stored events are kept in D1. */
  EVENT_RETENTION_DAYS?: string;
  /** Comma-separated exact origins (`https://app.example.com`) allowed to call /v1 from a browser; unset = no CORS. */
  CORS_ORIGINS?: string;
  /** Milliseconds an isolate serves API keys and credentials from memory (10 000; 0 = off; src/core/settings.ts). */
  LOOKUP_CACHE_MS?: string;
  ADMIN_TOKEN?: string;
  WEBHOOK_SECRET?: string;
  /** 32 random bytes in base64: encrypts tenants' provider credentials (src/credentials). */
  CREDENTIALS_KEY?: string;
}
