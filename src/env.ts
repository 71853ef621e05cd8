import type { SessionObject } from "./session";
import type { SessionEnv } from "./session/session-env";

/** Bindings, variables and secrets of the Worker (wrangler.toml, `.dev.vars`, `wrangler secret put`). */
export interface Env extends SessionEnv {
  SESSION: DurableObjectNamespace<SessionObject>;
  /** Requests per token (wrangler.toml `[[ratelimits]]`); absent = not limited. */
  RATE_LIMITER?: RateLimit;
  /** Cloudflare Images (wrangler.toml `[images]`): scales input images over a vendor limit down; absent = they are refused. */
  IMAGES?: ImagesBinding;
  /** Static assets (wrangler.toml `[assets]`): the pinned /docs viewer. */
  ASSETS: Fetcher;
  /** Seconds without progress after which the Cron sweeper resumes a run. */
  STALE_RUN_SECONDS?: string;
  /** Sweeps without progress after which a run ends in error. */
  MAX_RUN_SWEEPS?: string;
  /** Comma-separated exact origins (`https://app.example.com`) allowed to call /v1 from a browser; unset = no CORS. */
  CORS_ORIGINS?: string;
  ADMIN_TOKEN?: string;
  /** Multiplies every wait of the webhook retry schedule (default 1); only tests set it (0). */
  WEBHOOK_RETRY_SCALE?: string;
  /** Milliseconds a webhook attempt may take (default 15 000); only tests shorten it. */
  WEBHOOK_TIMEOUT_MS?: string;
}
