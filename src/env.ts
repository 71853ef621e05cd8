import type { SessionObject } from "./session/session-object";

/** Bindings, variables and secrets of the Worker (wrangler.toml, `.dev.vars`, `wrangler secret put`). */
export interface Env {
  DB: D1Database;
  SESSION: DurableObjectNamespace<SessionObject>;
  /** Requests per token (wrangler.toml `[[ratelimits]]`); absent = not limited. */
  RATE_LIMITER?: RateLimit;
  ENVIRONMENT?: string;
  ADMIN_TOKEN?: string;
  WEBHOOK_SECRET?: string;
  ANTHROPIC_API_KEY?: string;
  OPENAI_API_KEY?: string;
  OPENAI_CHAT_API_KEY?: string;
  ANTHROPIC_BASE_URL?: string;
  OPENAI_BASE_URL?: string;
  OPENAI_CHAT_BASE_URL?: string;
}
