import { describe, expect, it } from "vitest";
import { ProviderError } from "../src/providers/types";
import { retryDecision } from "../src/session/run/retry-policy";

const retryable = (retryAfterMs: number | null = null) => new ProviderError("overloaded", "Overloaded", true, 529, retryAfterMs);
const settings = { retries: 3, delay_between_retries: 1, exponential_backoff: false };

describe("retryDecision", () => {
  it("never retries a permanent error", () => {
    expect(retryDecision(new ProviderError("auth_error", "no", false, 401), 0, settings)).toBeNull();
  });

  it("stops when the run's budget is spent", () => {
    expect(retryDecision(retryable(), 2, settings)).toEqual({ delayMs: 1000 });
    expect(retryDecision(retryable(), 3, settings)).toBeNull();
    expect(retryDecision(retryable(), 0, { ...settings, retries: 0 })).toBeNull();
  });

  it("waits delay · 2^(k−1) with exponential backoff, else the delay", () => {
    const exponential = { retries: 4, delay_between_retries: 0.5, exponential_backoff: true };
    expect([0, 1, 2, 3].map((used) => retryDecision(retryable(), used, exponential)?.delayMs)).toEqual([500, 1000, 2000, 4000]);
    expect([0, 1, 2].map((used) => retryDecision(retryable(), used, settings)?.delayMs)).toEqual([1000, 1000, 1000]);
  });

  it("honours a longer retry-after, capped at 60 s, and never a shorter one", () => {
    expect(retryDecision(retryable(5000), 0, settings)).toEqual({ delayMs: 5000 });
    expect(retryDecision(retryable(120_000), 0, settings)).toEqual({ delayMs: 60_000 });
    expect(retryDecision(retryable(10), 0, settings)).toEqual({ delayMs: 1000 });
  });
});
