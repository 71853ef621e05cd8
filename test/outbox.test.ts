import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { gunzipText } from "../src/core/gzip-text";
import { MESSAGE_PACK_GZ } from "../src/session/store/message-packs";
import { MAX_BATCH_CHARS, MAX_BATCH_STATEMENTS, QUARANTINE_AFTER } from "../src/session/store/mirror";
import type { SessionStore } from "../src/session/store/session-store";
import { storedEvents } from "./support/events";
import { sessionStub, wrapSessionD1, type SeenStatement } from "./support/held-d1";
import { api, createAgent, createTenantToken, expectInvalid } from "./support/http";
import { runTurn } from "./support/runs";
import { callsReceived } from "./support/tool-server";
import { mirroredEventRows, mirroredMessages } from "./support/mirror";

/** What the object's mirror has not sent, has set aside, and whether its outbox timer is armed. */
const mirrorState = (sessionId: string) =>
  runInDurableObject(sessionStub(sessionId), async (_i, state) => {
    const sql = state.storage.sql;
    const count = (query: string) => sql.exec<{ n: number }>(query).one().n;
    const mark = sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = 'events_mirrored'").toArray()[0]?.value ?? "0";
    return {
      outbox: count("SELECT COUNT(*) AS n FROM outbox"),
      unmirroredEvents: count(`SELECT COUNT(*) AS n FROM events WHERE seq > ${Number(mark)}`),
      quarantined: sql.exec<{ statements: string; error: string }>("SELECT statements, error FROM quarantine ORDER BY id").toArray(),
      outboxTimer: sql.exec("SELECT due_at FROM timers WHERE name = 'outbox'").toArray().length === 1,
      alarm: await state.storage.getAlarm(),
    };
  });

/** Makes the outbox timer due and rings the alarm, as the platform does when it is due. */
async function ringOutboxTimer(sessionId: string): Promise<void> {
  await runInDurableObject(sessionStub(sessionId), (_i, state) => {
    state.storage.sql.exec("UPDATE timers SET due_at = 0 WHERE name = 'outbox'");
  });
  await runDurableObjectAlarm(sessionStub(sessionId));
}

const mirroredStatus = async (runId: string) =>
  (await env.DB.prepare("SELECT status FROM runs WHERE id = ?").bind(runId).first<{ status: string }>())?.status ?? null;

const mirroredEventSeqs = async (runId: string) => (await mirroredEventRows("run_id", runId)).map((r) => r.seq);

/** A D1 that is down: every batch fails (a probe too) until the test brings it back. */
async function d1Outage(sessionId: string) {
  const outage = { down: true };
  await wrapSessionD1(sessionId, async (_statements, send) => {
    if (outage.down) throw new Error("D1_ERROR: Network connection lost.");
    return send();
  });
  return outage;
}

describe("the outbox to D1", () => {
  it("quarantines a statement D1 rejects for good, and mirrors everything else", async () => {
    const agent = await createAgent();
    const sessionId = `quarantine-${crypto.randomUUID()}`;
    await runTurn(agent.id, { input: "first", session_id: sessionId });
    // The user's message "POISON", alone or in a pack of the batch's messages (src/session/store/message-packs.ts).
    const poisoned = async (s: SeenStatement) => {
      if (!/INTO "?messages"?\s/i.test(s.sql)) return false;
      const pack = s.params.includes(MESSAGE_PACK_GZ) ? await gunzipText(String(s.params[5])) : JSON.stringify(s.params);
      return pack.includes("POISON") && pack.includes("user");
    };
    await wrapSessionD1(sessionId, async (statements, send) => {
      if ((await Promise.all(statements.map(poisoned))).some(Boolean)) throw new Error("D1_ERROR: string or blob too big: SQLITE_TOOBIG");
      return send();
    });
    const run = await runTurn(agent.id, { input: "POISON", session_id: sessionId });
    expect(run.status).toBe("completed");

    for (let ring = 0; ring < QUARANTINE_AFTER && (await mirrorState(sessionId)).outbox > 0; ring++) await ringOutboxTimer(sessionId);
    const state = await mirrorState(sessionId);
    expect(state.outbox).toBe(0);
    expect(state.unmirroredEvents).toBe(0);
    expect(state.outboxTimer).toBe(false);
    expect(state.quarantined).toHaveLength(1);
    expect(state.quarantined[0]!.error).toContain("SQLITE_TOOBIG");
    expect(state.quarantined[0]!.statements).toContain("POISON");

    // Everything but the rejected statement reached D1.
    expect(await mirroredStatus(run.id)).toBe("completed");
    expect(await mirroredEventSeqs(run.id)).toEqual((await storedEvents(agent.id, run.id)).map((e) => e.seq));
    const messages = await mirroredMessages(sessionId);
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "assistant"]);

    // The operator sees it: listed by the admin route and counted by the admin's health check.
    const listed = await api("/v1/quarantine?limit=100");
    expect(listed.status).toBe(200);
    const body = await listed.json<{ data: { tenant: string; session_id: string; statements: number; error: string }[]; total: number }>();
    expect(body.data.filter((q) => q.session_id === sessionId)).toEqual([
      expect.objectContaining({ tenant: "default", statements: 1, error: expect.stringContaining("SQLITE_TOOBIG") }),
    ]);
    expect(JSON.stringify(body)).not.toContain("POISON");
    const health = await (await api("/v1/health")).json<{ quarantined: number }>();
    expect(health.quarantined).toBe(body.total);
  });

  it("shows the quarantine to the operator only", async () => {
    const tenantToken = await createTenantToken();
    const refused = await api("/v1/quarantine", {}, tenantToken);
    expect(refused.status).toBe(403);
    const health = await (await api("/v1/health", {}, tenantToken)).json<Record<string, unknown>>();
    expect(health).not.toHaveProperty("quarantined");
    await expectInvalid(await api("/v1/quarantine?limit=0"), "query.limit");
  });

  it("keeps everything while D1 is down, quarantines nothing, and sends it all once D1 is back", async () => {
    const agent = await createAgent();
    const sessionId = `outage-${crypto.randomUUID()}`;
    await runTurn(agent.id, { input: "first", session_id: sessionId });
    const outage = await d1Outage(sessionId);
    const run = await runTurn(agent.id, { input: "during the outage", session_id: sessionId });
    expect(run.status).toBe("completed");
    for (let ring = 0; ring < QUARANTINE_AFTER + 2; ring++) await ringOutboxTimer(sessionId);

    const during = await mirrorState(sessionId);
    expect(during.outbox).toBeGreaterThan(0);
    expect(during.unmirroredEvents).toBeGreaterThan(0);
    expect(during.quarantined).toEqual([]);
    expect(during.outboxTimer).toBe(true);
    expect(await mirroredStatus(run.id)).toBe(null);

    // Retention prunes only what reached D1: with every event past its retention, the unsent ones stay.
    await runInDurableObject(sessionStub(sessionId), (instance) => {
      (instance as unknown as { core: { store: SessionStore } }).core.store.pruneEvents(new Date(Date.now() + 86_400_000).toISOString());
    });
    expect((await mirrorState(sessionId)).unmirroredEvents).toBe(during.unmirroredEvents);

    outage.down = false;
    await ringOutboxTimer(sessionId);
    const after = await mirrorState(sessionId);
    expect(after).toMatchObject({ outbox: 0, unmirroredEvents: 0, quarantined: [], outboxTimer: false });
    expect(await mirroredStatus(run.id)).toBe("completed");
    expect(await mirroredEventSeqs(run.id)).toEqual((await storedEvents(agent.id, run.id)).map((e) => e.seq));
  });

  it("leaves its timer armed when the object is evicted with a non-empty outbox, and the alarm sends it", async () => {
    const agent = await createAgent();
    const sessionId = `evicted-outbox-${crypto.randomUUID()}`;
    await runTurn(agent.id, { input: "first", session_id: sessionId });
    await d1Outage(sessionId);
    const run = await runTurn(agent.id, { input: "then evicted", session_id: sessionId });
    expect(run.status).toBe("completed");

    // The instance (and its outage) is gone; nothing touches the session but its own alarm.
    await abortAllDurableObjects();
    const evicted = await mirrorState(sessionId);
    expect(evicted.outbox).toBeGreaterThan(0);
    expect(evicted.outboxTimer).toBe(true);
    expect(evicted.alarm).not.toBe(null);
    expect(await mirroredStatus(run.id)).toBe(null);

    await ringOutboxTimer(sessionId);
    expect(await mirrorState(sessionId)).toMatchObject({ outbox: 0, unmirroredEvents: 0, outboxTimer: false });
    expect(await mirroredStatus(run.id)).toBe("completed");
    expect(await mirroredEventSeqs(run.id)).toEqual((await storedEvents(agent.id, run.id)).map((e) => e.seq));
  });

  it("sends a step with a megabyte of events and messages in bounded batches", async () => {
    const bucket = crypto.randomUUID();
    const echo = {
      type: "webhook",
      name: "echo",
      parameters: { type: "object", properties: {} },
      url: `${env.TOOL_SERVER_URL}/echo/${bucket}`,
    };
    const agent = await createAgent({ tools: [echo] });
    const sessionId = `large-step-${crypto.randomUUID()}`;
    await runTurn(agent.id, { input: "first", session_id: sessionId });
    const batches: { statements: number; chars: number }[] = [];
    await wrapSessionD1(sessionId, async (statements, send) => {
      const chars = statements.reduce((n, s) => n + s.params.reduce<number>((m, p) => m + (typeof p === "string" ? p.length : 8), 0), 0);
      batches.push({ statements: statements.length, chars });
      return send();
    });
    // Eight calls of 90 KB arguments, each echoed back: about 1.4 MB of events and as much in messages.
    const calls = Array.from({ length: 8 }, (_, i) => `[[tool echo {"blob":"${String(i).repeat(90_000)}"}]]`).join(" ");
    const run = await runTurn(agent.id, { input: `${calls} go`, session_id: sessionId });
    expect(run.status).toBe("completed");
    expect(await callsReceived(bucket, 8)).toHaveLength(8);
    await runInDurableObject(sessionStub(sessionId), async (instance) => {
      await (instance as unknown as { core: { flushed: () => Promise<void> } }).core.flushed();
    });

    expect(await mirrorState(sessionId)).toMatchObject({ outbox: 0, unmirroredEvents: 0, quarantined: [] });
    expect(await mirroredEventSeqs(run.id)).toEqual((await storedEvents(agent.id, run.id)).map((e) => e.seq));
    expect(batches.length).toBeGreaterThan(2);
    // One statement may be larger than the bound (a run's body with its 720 KB input): it then goes alone.
    for (const batch of batches) {
      expect(batch.statements).toBeLessThanOrEqual(MAX_BATCH_STATEMENTS);
      expect(batch.statements === 1 || batch.chars <= MAX_BATCH_CHARS).toBe(true);
    }
  });
});
