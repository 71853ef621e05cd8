/** A positive number from a `[vars]` string, or the default when it is absent or not one. */
export function positiveNumber(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return value !== undefined && Number.isFinite(n) && n > 0 ? n : fallback;
}

/** A number ≥ 0 from a `[vars]` string, or the default when it is absent, blank or not one. */
export function nonNegativeNumber(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return value !== undefined && value.trim() !== "" && Number.isFinite(n) && n >= 0 ? n : fallback;
}

/** Stored events created before this time are deleted (`EVENT_RETENTION_DAYS`, 30). */
export const eventRetentionCutoff = (env: { EVENT_RETENTION_DAYS?: string }, now: Date): string =>
  new Date(now.getTime() - positiveNumber(env.EVENT_RETENTION_DAYS, 30) * 86_400_000).toISOString();

/**
 * How long an isolate may serve an API key or a tenant credential from memory
 * (`LOOKUP_CACHE_MS`, 10 000 ms; 0 turns the caches off): the bound after which a key revoked
 * or a credential deleted through another isolate stops being used (docs/performance.md).
 */
export function lookupCacheMs(env: { LOOKUP_CACHE_MS?: string }): number {
  const n = Number(env.LOOKUP_CACHE_MS);
  return env.LOOKUP_CACHE_MS !== undefined && env.LOOKUP_CACHE_MS.trim() !== "" && Number.isFinite(n) && n >= 0 ? n : 10_000;
}
