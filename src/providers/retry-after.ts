type HeaderSource = { get(name: string): string | null };

/**
 * Reads a provider's wait hint: `retry-after-ms` (milliseconds), else `retry-after`
 * (seconds, fractions allowed, or an HTTP date). Null when absent or unreadable.
 */
export function parseRetryAfterMs(headers: HeaderSource | null | undefined, now = Date.now()): number | null {
  if (!headers) return null;
  const ms = toNumber(headers.get("retry-after-ms"));
  if (ms !== null) return Math.ceil(ms);
  const value = headers.get("retry-after")?.trim();
  if (!value) return null;
  const seconds = toNumber(value);
  if (seconds !== null) return Math.ceil(seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

function toNumber(value: string | null): number | null {
  if (value === null || !/^\s*\d+(\.\d+)?\s*$/.test(value)) return null;
  const n = Number(value);
  return Number.isFinite(n) ? n : null;
}
