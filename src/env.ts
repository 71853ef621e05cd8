import type { ProviderEnv } from "./providers";
import type { SessionObject } from "./session/session-object";

/** Bindings, variables and secrets of the Worker (wrangler.toml, `.dev.vars`, `wrangler secret put`). */
export interface Env extends ProviderEnv {
  DB: D1Database;
  SESSION: DurableObjectNamespace<SessionObject>;
  /** Requests per token (wrangler.toml `[[ratelimits]]`); absent = not limited. */
  RATE_LIMITER?: RateLimit;
  ENVIRONMENT?: string;
  ADMIN_TOKEN?: string;
  WEBHOOK_SECRET?: string;
}
