/**
 * The q-quantile (0..1) of numbers, by linear interpolation between the nearest ranks; NaN when empty.
 * @param {number[]} values
 * @param {number} q
 */
export function quantile(values, q) {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q;
  const low = sorted[Math.floor(position)] ?? Number.NaN;
  const high = sorted[Math.ceil(position)] ?? Number.NaN;
  return low + (high - low) * (position - Math.floor(position));
}

/**
 * The median of numbers.
 * @param {number[]} values
 */
export const median = (values) => quantile(values, 0.5);

/**
 * The 95th percentile of numbers.
 * @param {number[]} values
 */
export const p95 = (values) => quantile(values, 0.95);

/**
 * Sum of numbers.
 * @param {number[]} values
 */
export const sum = (values) => values.reduce((total, value) => total + value, 0);

/** Milliseconds since an arbitrary origin, sub-millisecond. */
export const now = () => performance.now();

/**
 * Waits `ms` milliseconds.
 * @param {number} ms
 * @returns {Promise<void>}
 */
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
