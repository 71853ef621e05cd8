import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { meterD1, takeMeter } from "../src/core/storage-meter";
import { api } from "./support/http";

describe("the bench's storage meter", () => {
  it("is not reachable when STORAGE_METER is off, not even with the admin token", async () => {
    const response = await api("/v1/admin/storage-meter");
    expect(response.status).toBe(404);
  });

  it("counts the rows D1 writes through a metered binding, in single statements and in batches", async () => {
    takeMeter();
    const db = meterD1(env.DB);
    const key = crypto.getRandomValues(new Uint32Array(1))[0]! * 2;
    // A rowid table without other indexes: D1 counts each index a write updates as a row written too.
    await db.prepare("CREATE TABLE IF NOT EXISTS meter_probe (k INTEGER PRIMARY KEY, v INTEGER)").run();
    takeMeter();
    await db.prepare("INSERT INTO meter_probe (k, v) VALUES (?, ?)").bind(key, 1).run();
    await db.batch([
      db.prepare("INSERT INTO meter_probe (k, v) VALUES (?, ?)").bind(key + 1, 2),
      db.prepare("UPDATE meter_probe SET v = v + 1 WHERE k = ?").bind(key),
    ]);
    const row = await db.prepare("SELECT v FROM meter_probe WHERE k = ?").bind(key).first<{ v: number }>();
    const counts = takeMeter();
    expect(row?.v).toBe(2);
    expect(counts.d1_rows_written).toBe(3);
    expect(counts.d1_queries).toBe(4);
    expect(takeMeter().d1_rows_written).toBe(0);
  });
});
