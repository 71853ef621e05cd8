import type { TestContext } from "vitest";

/** The counts a reliability test reports: category (e.g. "inputs") → name (e.g. "tried") → number. */
export type Counts = Record<string, Record<string, number>>;

/**
 * Adds `by` to the count `category.name` of the running test; test/node/reliability-reporter.ts
 * sums every test's counts into docs/reliability-results.json (task meta crosses from workerd to Node).
 */
export function count(context: TestContext, category: string, name: string, by = 1): void {
  const meta = context.task.meta as { reliability?: Counts };
  meta.reliability ??= {};
  const counts = meta.reliability;
  counts[category] ??= {};
  const into = counts[category];
  into[name] = (into[name] ?? 0) + by;
}
