import { nonNegativeNumber } from "../core/settings";

/**
 * When a failed delivery is tried again (docs/webhooks.md): the wait after the 1st, 2nd, …
 * failed attempt of a schedule. The first attempt is at once; then 5 s, 30 s, 2 min, 10 min,
 * 1 h, 3 h, then every 6 h while the next attempt falls within 24 h of the first: 10 attempts
 * over about 22 h. After the last one fails the delivery is `dead`.
 */
export const RETRY_DELAYS_SECONDS: readonly number[] = [5, 30, 120, 600, 3600, 10_800, 21_600, 21_600, 21_600];

/** How long an attempt may take before it counts as failed. */
export const ATTEMPT_TIMEOUT_MS = 15_000;

/** The wait in seconds after the `failed`-th failed attempt of a schedule (1-based), or null: the delivery is dead. */
export function retryDelaySeconds(failed: number): number | null {
  return RETRY_DELAYS_SECONDS[failed - 1] ?? null;
}

/**
 * The schedule's scale (`WEBHOOK_RETRY_SCALE`, default 1): every wait is multiplied by it. Only
 * tests set it (0: retries come at once), so that they never wait real seconds.
 */
export const retryScale = (env: { WEBHOOK_RETRY_SCALE?: string }): number => nonNegativeNumber(env.WEBHOOK_RETRY_SCALE, 1);

/** An attempt's timeout (`WEBHOOK_TIMEOUT_MS`, default 15 000; tests shorten it). */
export const attemptTimeoutMs = (env: { WEBHOOK_TIMEOUT_MS?: string }): number =>
  nonNegativeNumber(env.WEBHOOK_TIMEOUT_MS, ATTEMPT_TIMEOUT_MS) || ATTEMPT_TIMEOUT_MS;
