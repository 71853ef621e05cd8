/** The q-quantile (0..1) of numbers, by linear interpolation between the nearest ranks; NaN when empty. */
export function quantile(values, q) {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.ceil(position);
  return sorted[low] + (sorted[high] - sorted[low]) * (position - low);
}

/** The median of numbers. */
export const median = (values) => quantile(values, 0.5);

/** The 95th percentile of numbers. */
export const p95 = (values) => quantile(values, 0.95);

/** Sum of numbers. */
export const sum = (values) => values.reduce((total, value) => total + value, 0);

/** Milliseconds since an arbitrary origin, sub-millisecond. */
export const now = () => performance.now();

/** Waits `ms` milliseconds. */
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
