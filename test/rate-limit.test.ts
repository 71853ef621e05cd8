import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createApp } from "../src/api/app";
import { RATE_LIMIT_PERIOD_SECONDS, retryAfterSeconds } from "../src/api/rate-limit";
import wranglerToml from "../wrangler.toml?raw";
import type { Env } from "../src/env";
import { apiRequest, createTenantToken } from "./support/http";

/** TEST_RATE_LIMITER's limit in vitest.config.ts. */
const LIMIT = 5;
const PERIOD_MS = 10_000;

const app = createApp();
/** The app with its RATE_LIMITER swapped: the test config gives the default one a huge limit. */
const fetchWith = (limiter: RateLimit | undefined, token: string) =>
  app.fetch(apiRequest("/v1/agents", {}, token), { ...env, RATE_LIMITER: limiter } satisfies Env, createExecutionContext());

/**
 * The platform's binding, counted by the test: each key gets `LIMIT` requests, then none. The
 * real local limiter counts in windows of the wall clock, which a test on a busy machine cannot
 * place its requests in; this one answers the same way whenever the requests come.
 */
function countingLimiter(): RateLimit & { keys: string[] } {
  const keys: string[] = [];
  return {
    keys,
    limit: async ({ key }) => {
      keys.push(key);
      return { success: keys.filter((k) => k === key).length <= LIMIT };
    },
  };
}

describe("rate limit", () => {
  afterEach(() => vi.useRealTimers());

  it(`answers 429 rate_limited with Retry-After after ${LIMIT} requests of one token`, async () => {
    const token = await createTenantToken();
    const other = await createTenantToken();
    const limiter = countingLimiter();
    for (let i = 0; i < LIMIT; i++) expect((await fetchWith(limiter, token)).status).toBe(200);
    // 4.2 s into a 10 s window: the window ends in 5.8 s.
    vi.useFakeTimers({ toFake: ["Date"], now: 1_004_200 });
    const limited = await fetchWith(limiter, token);
    vi.useRealTimers();
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("6");
    const body = await limited.json<{ error: { type: string; details: Record<string, unknown> } }>();
    expect(body.error.type).toBe("rate_limited");
    expect(body.error.details.retry_after_seconds).toBe(6);
    expect((await fetchWith(limiter, token)).status).toBe(429);
    // The limit is per token: another token is not affected.
    expect((await fetchWith(limiter, other)).status).toBe(200);
    // One key per token, never the token itself.
    expect(new Set(limiter.keys).size).toBe(2);
    expect(limiter.keys.join(" ")).not.toContain(token);
  });

  it(`limits a token with the real binding: ${2 * LIMIT + 1} requests within one period cannot all pass`, async () => {
    const token = await createTenantToken();
    const started = Date.now();
    const statuses: number[] = [];
    for (let i = 0; i <= 2 * LIMIT; i++) statuses.push((await fetchWith(env.TEST_RATE_LIMITER, token)).status);
    // Clock-aligned windows: requests within one period fall in at most two windows, each allowing LIMIT.
    expect(Date.now() - started).toBeLessThan(PERIOD_MS);
    expect(statuses.slice(0, LIMIT)).toEqual(Array(LIMIT).fill(200));
    expect(statuses).toContain(429);
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
  });

  it("does not limit a deployment without the binding", async () => {
    const token = await createTenantToken();
    for (let i = 0; i < LIMIT * 2; i++) expect((await fetchWith(undefined, token)).status).toBe(200);
  });

  it("is configured on the Worker: RATE_LIMITER in wrangler.toml, 300 per 10 s (docs/api.md)", () => {
    const block = /\[\[ratelimits\]\]\s*name = "RATE_LIMITER"[^[]*?simple = \{ limit = (\d+), period = (\d+) \}/.exec(wranglerToml);
    expect(block?.slice(1)).toEqual(["300", String(RATE_LIMIT_PERIOD_SECONDS)]);
  });

  it("computes Retry-After as the seconds left in the window, at least 1", () => {
    expect(retryAfterSeconds(1_000_000)).toBe(10);
    expect(retryAfterSeconds(1_000_001)).toBe(10);
    expect(retryAfterSeconds(1_004_200)).toBe(6);
    expect(retryAfterSeconds(1_009_999)).toBe(1);
    expect(retryAfterSeconds(1_050_000, 60)).toBe(30);
  });
});
