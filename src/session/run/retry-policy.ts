import type { ProviderError } from "../../providers/types";

/** The longest wait Agentry honours when a provider's `retry-after` asks for more than the policy. */
export const MAX_RETRY_AFTER_MS = 60_000;

export type RetrySettings = { retries: number; delay_between_retries: number; exponential_backoff: boolean };

/**
 * Whether a failed model call is retried, and after how long (docs/api.md, Retries). `retriesUsed`
 * counts the run's retries so far: one budget per run, shared by its model calls. The wait
 * before retry k is `delay · 2^(k−1)` with exponential backoff, else `delay`; a provider's
 * `retry-after` wins when it asks for longer, up to 60 s.
 */
export function retryDecision(error: ProviderError, retriesUsed: number, settings: RetrySettings): { delayMs: number } | null {
  if (!error.retryable || retriesUsed >= settings.retries) return null;
  const k = retriesUsed + 1;
  const base = settings.delay_between_retries * 1000 * (settings.exponential_backoff ? 2 ** (k - 1) : 1);
  const asked = error.retryAfterMs === null ? 0 : Math.min(error.retryAfterMs, MAX_RETRY_AFTER_MS);
  return { delayMs: Math.round(Math.max(base, asked)) };
}
