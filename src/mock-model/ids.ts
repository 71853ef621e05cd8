/** Ids in each provider's shape: a prefix and random hex (matches `^[a-zA-Z0-9_-]+$`). */
export const randomId = (prefix: string, length = 24): string =>
  prefix + (crypto.randomUUID() + crypto.randomUUID()).replace(/-/g, "").slice(0, length);

/** Unix seconds, as OpenAI's `created` / `created_at` fields. */
export const unixNow = (): number => Math.floor(Date.now() / 1000);
