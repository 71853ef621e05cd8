import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../src/api/app";
import { retryAfterSeconds } from "../src/api/rate-limit";
import type { Env } from "../src/env";
import { api, apiRequest, createTenantToken } from "./support/http";

/** TEST_RATE_LIMITER's limit in vitest.config.ts. */
const LIMIT = 5;
const PERIOD_MS = 10_000;

const app = createApp();
/** The app with its RATE_LIMITER swapped: the test config gives the default one a huge limit. */
const fetchWith = (limiter: RateLimit | undefined, token: string) =>
  app.fetch(apiRequest("/v1/agents", {}, token), { ...env, RATE_LIMITER: limiter } satisfies Env, createExecutionContext());

/**
 * Local rate limiters count in windows aligned to the clock (miniflare's epoch is
 * `floor(now / period)`): start where the rest of the window is long enough to be exact.
 */
async function startOfWindow(): Promise<void> {
  const left = PERIOD_MS - (Date.now() % PERIOD_MS);
  if (left < 3_000) await new Promise((resolve) => setTimeout(resolve, left + 50));
}

describe("rate limit", () => {
  it(`answers 429 rate_limited with Retry-After after ${LIMIT} requests of one token`, async () => {
    const token = await createTenantToken();
    const other = await createTenantToken();
    await startOfWindow();
    for (let i = 0; i < LIMIT; i++) expect((await fetchWith(env.TEST_RATE_LIMITER, token)).status).toBe(200);
    const limited = await fetchWith(env.TEST_RATE_LIMITER, token);
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(10);
    const body = await limited.json<{ error: { type: string; details: Record<string, unknown> } }>();
    expect(body.error.type).toBe("rate_limited");
    expect(body.error.details.retry_after_seconds).toBe(retryAfter);
    expect((await fetchWith(env.TEST_RATE_LIMITER, token)).status).toBe(429);
    // The limit is per token: another token is not affected.
    expect((await fetchWith(env.TEST_RATE_LIMITER, other)).status).toBe(200);
  });

  it("does not limit a deployment without the binding", async () => {
    const token = await createTenantToken();
    for (let i = 0; i < LIMIT * 2; i++) expect((await fetchWith(undefined, token)).status).toBe(200);
  });

  it("is configured on the Worker (RATE_LIMITER binding)", async () => {
    expect(env.RATE_LIMITER).toBeDefined();
    expect((await api("/v1/health")).status).toBe(200);
  });

  it("computes Retry-After as the seconds left in the window, at least 1", () => {
    expect(retryAfterSeconds(1_000_000)).toBe(10);
    expect(retryAfterSeconds(1_000_001)).toBe(10);
    expect(retryAfterSeconds(1_004_200)).toBe(6);
    expect(retryAfterSeconds(1_009_999)).toBe(1);
    expect(retryAfterSeconds(1_050_000, 60)).toBe(30);
  });
});
