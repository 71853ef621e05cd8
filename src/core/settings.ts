import type { Env } from "../env";

/** A positive number from a `[vars]` string, or the default when it is absent or not one. */
export function positiveNumber(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return value !== undefined && Number.isFinite(n) && n > 0 ? n : fallback;
}

/** Stored events created before this time are deleted (`EVENT_RETENTION_DAYS`, 30). */
export const eventRetentionCutoff = (env: Pick<Env, "EVENT_RETENTION_DAYS">, now: Date): string =>
  new Date(now.getTime() - positiveNumber(env.EVENT_RETENTION_DAYS, 30) * 86_400_000).toISOString();
