import { errorMessage } from "../core/errors";
import { createMiddleware } from "hono/factory";
import { log } from "../core/log";
import { ApiError } from "./errors";
import type { AppEnv } from "./router";

/** The `period` of the `RATE_LIMITER` binding in wrangler.toml (the binding allows 10 or 60). */
export const RATE_LIMIT_PERIOD_SECONDS = 10;

/**
 * Seconds until the current window ends. The binding answers only `{ success }`, so this assumes
 * windows aligned to the clock (as local miniflare counts them); it is at least 1.
 */
export function retryAfterSeconds(nowMs: number, periodSeconds = RATE_LIMIT_PERIOD_SECONDS): number {
  const periodMs = periodSeconds * 1000;
  return Math.max(1, Math.ceil((periodMs - (nowMs % periodMs)) / 1000));
}

/**
 * Limits each token (the admin token, or each key) through the Workers Rate Limiting binding:
 * over the limit, `429 rate_limited` with `Retry-After`. Runs after `authenticate`. Without
 * the binding (a deployment that did not configure it), requests are not limited.
 */
export const rateLimit = createMiddleware<AppEnv>(async (c, next) => {
  const limiter = c.env.RATE_LIMITER;
  if (limiter) {
    let allowed = true;
    try {
      allowed = (await limiter.limit({ key: c.get("tokenId") })).success;
    } catch (error) {
      // A limiter that fails must not take the API down with it: let the request through.
      log({ event: "unhandled_error", message: `rate limiter: ${errorMessage(error)}` });
    }
    if (!allowed) {
      const retryAfter = retryAfterSeconds(Date.now());
      throw new ApiError(
        "rate_limited",
        `Too many requests for this token; retry after ${retryAfter} s`,
        { retry_after_seconds: retryAfter },
        { "Retry-After": String(retryAfter) },
      );
    }
  }
  await next();
});
