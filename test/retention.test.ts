import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { applyRetention } from "../src/maintenance/sweeper";

const count = async (table: "events" | "idempotency_keys", tenant: string) =>
  (await env.DB.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE tenant = ?`).bind(tenant).first<{ n: number }>())?.n;

describe("retention (the Cron trigger)", () => {
  it("deletes events older than EVENT_RETENTION_DAYS and idempotency keys older than a day, and keeps the rest", async () => {
    const tenant = `retention-${crypto.randomUUID()}`;
    const now = new Date("2026-06-30T00:00:00.000Z");
    const old = "2026-01-01T00:00:00.000Z";
    const recent = "2026-06-29T12:00:00.000Z";
    await env.DB.batch([
      env.DB.prepare(
        "INSERT INTO events (tenant, session_id, seq, run_id, type, data, created_at) VALUES (?, 's', 1, 'r', 't', '{}', ?)",
      ).bind(tenant, old),
      env.DB.prepare(
        "INSERT INTO events (tenant, session_id, seq, run_id, type, data, created_at) VALUES (?, 's', 2, 'r', 't', '{}', ?)",
      ).bind(tenant, recent),
      env.DB.prepare("INSERT INTO idempotency_keys (tenant, key, fingerprint, created_at) VALUES (?, 'old', 'f', ?)").bind(tenant, old),
      env.DB.prepare("INSERT INTO idempotency_keys (tenant, key, fingerprint, created_at) VALUES (?, 'new', 'f', ?)").bind(tenant, recent),
    ]);
    expect(await applyRetention(env, now)).toBeGreaterThanOrEqual(1);
    expect(await count("events", tenant)).toBe(1);
    expect(await count("idempotency_keys", tenant)).toBe(1);
  });
});
