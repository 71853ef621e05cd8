import {
  abortAllDurableObjects,
  createExecutionContext,
  createMessageBatch,
  getQueueResult,
  runDurableObjectAlarm,
  runInDurableObject,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../src/index";
import type { Env } from "../src/env";
import { attemptDelivery } from "../src/webhooks/send";
import { RETRY_DELAYS_SECONDS, type WebhookMessage } from "../src/webhooks";
import { sweepWebhookDeliveries } from "../src/maintenance/webhook-sweep";
import { applyRetention } from "../src/maintenance/sweeper";
import { database } from "../src/db/client";
import { webhookDeliveries } from "../src/db/schema";
import { ADMIN_TOKEN, api, apiRequest, createAgent, createTenantToken, expectInvalid } from "./support/http";
import { agentryOpenAI } from "./support/openai-sdk";
import { testClient } from "./support/client";
import { sessionStub, wrapSessionD1 } from "./support/held-d1";
import { postRun, runTurn, type Run } from "./support/runs";
import { callsReceived, gateTool, openGate } from "./support/tool-server";
import { createWebhook, deliveries, giveSecret, received, receivedFor, receiverUrl, type Delivery, type Payload } from "./support/webhooks";

const RUN_EVENTS = ["run.completed", "run.failed", "run.cancelled", "run.paused", "run.queued"];
const RESPONSE_EVENTS = ["response.completed", "response.failed", "response.cancelled", "response.incomplete"];
const askUser = { type: "client", name: "ask", parameters: { type: "object", properties: {} } };

/** A delivery of the webhook once `until` holds for it (the consumer records an attempt just after the receiver answers). */
async function deliveryWhen(token: string, webhookId: string, until: (d: Delivery) => boolean): Promise<Delivery> {
  for (;;) {
    const found = (await deliveries(token, webhookId)).find(until);
    if (found) return found;
    await scheduler.wait(20);
  }
}

/** The one verified call about `runId` of type `type` that the receiver got. */
async function expectEvent(bucket: string, run: { id: string; session_id: string; agent_id: string }, type: string, status: string) {
  for (let count = 1; ; count++) {
    const calls = await receivedFor(bucket, run.id, count);
    const call = calls.find((c) => (c.payload as Payload).type === type);
    if (!call) continue;
    expect(call.verified).toBe(true);
    expect(call.payload).toEqual({
      type,
      timestamp: expect.any(String),
      data: { run_id: run.id, session_id: run.session_id, agent_id: run.agent_id, status },
    });
    return call;
  }
}

const activeRunOf = async (token: string, sessionId: string): Promise<string> => {
  for (;;) {
    const session = await (await api(`/v1/sessions/${sessionId}`, {}, token)).json<{ active_run_id: string | null }>();
    if (session.active_run_id) return session.active_run_id;
    await scheduler.wait(20);
  }
};

const cancel = (token: string, agentId: string, runId: string) =>
  api(`/v1/agents/${agentId}/runs/${runId}/cancel`, { method: "POST" }, token);

/** The Worker's environment with the webhook queue replaced by a recorder, and `vars` over it. */
function recordingEnv(vars: Record<string, string> = {}) {
  const sent: { body: WebhookMessage; delaySeconds: number | undefined }[] = [];
  const queue = {
    send: async (body: WebhookMessage, options?: { delaySeconds?: number }) =>
      void sent.push({ body, delaySeconds: options?.delaySeconds }),
    sendBatch: async (messages: Iterable<MessageSendRequest<WebhookMessage>>) => {
      for (const m of messages) sent.push({ body: m.body, delaySeconds: m.delaySeconds });
    },
  };
  const props = Object.fromEntries(Object.entries({ WEBHOOKS: queue, ...vars }).map(([k, value]) => [k, { value }]));
  return { env: Object.create(env, props) as Env, sent };
}

/** Runs the webhook queue's consumer on `bodies` with `withEnv`, as the platform would. */
async function consume(bodies: WebhookMessage[], withEnv: Env) {
  const batch = createMessageBatch(
    "agentry-webhooks",
    bodies.map((body, i) => ({ id: `w${i}`, timestamp: new Date(), attempts: 1, body })),
  );
  await worker.queue(batch, withEnv);
  return getQueueResult(batch, createExecutionContext());
}

/** A delivery written straight into D1, as the mirror's fan-out makes it. */
async function pendingDelivery(
  tenant: string,
  webhookId: string,
  fields: Partial<typeof webhookDeliveries.$inferInsert> = {},
): Promise<string> {
  const id = `msg_${crypto.randomUUID().replaceAll("-", "")}`;
  const now = new Date().toISOString();
  await database(env.DB)
    .insert(webhookDeliveries)
    .values({
      id,
      tenant,
      webhookId,
      eventKey: `run_x:${id}`,
      eventType: "run.completed",
      runId: "run_x",
      sessionId: "ses_x",
      agentId: "agt_x",
      runStatus: "completed",
      eventAt: now,
      attempts: 0,
      roundStart: 0,
      status: "pending",
      nextAttemptAt: now,
      createdAt: now,
      ...fields,
    })
    .run();
  return id;
}

describe("POST /v1/webhooks", () => {
  it("shows the secret only at creation; lists and reads never show it", async () => {
    const token = await createTenantToken();
    const webhook = await createWebhook(token, crypto.randomUUID(), { events: ["run.completed"] });
    expect(webhook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(webhook).toMatchObject({ id: expect.stringMatching(/^wh_/), events: ["run.completed"], agent_id: null });
    const listed = await (await api("/v1/webhooks", {}, token)).text();
    const read = await (await api(`/v1/webhooks/${webhook.id}`, {}, token)).text();
    for (const text of [listed, read]) {
      expect(text).not.toContain(webhook.secret);
      expect(text).not.toContain("secret");
    }
    const { secret: _, ...shown } = webhook;
    expect(JSON.parse(read)).toEqual(shown);
    expect(JSON.parse(listed)).toEqual({ data: [shown], next_cursor: null });
  });

  it("answers an Idempotency-Key retry with the same webhook, its secret null", async () => {
    const token = await createTenantToken();
    const init = { body: { url: receiverUrl("idem"), events: ["run.failed"] }, headers: { "idempotency-key": crypto.randomUUID() } };
    const first = await (await api("/v1/webhooks", init, token)).json<{ id: string; secret: string | null }>();
    const again = await api("/v1/webhooks", init, token);
    expect(again.status).toBe(201);
    expect(await again.json()).toEqual({ ...first, secret: null });
    expect(first.secret).toMatch(/^whsec_/);
    expect((await (await api("/v1/webhooks", {}, token)).json<{ data: unknown[] }>()).data).toHaveLength(1);
  });

  it("refuses bad input with a 400 naming the field, and stores nothing", async () => {
    const token = await createTenantToken();
    const url = receiverUrl("never");
    await expectInvalid(await api("/v1/webhooks", { body: { url: "ftp://x", events: ["run.completed"] } }, token), "url");
    await expectInvalid(await api("/v1/webhooks", { body: { url, events: [] } }, token), "events");
    await expectInvalid(await api("/v1/webhooks", { body: { url, events: ["run.exploded"] } }, token), "events.0");
    await expectInvalid(await api("/v1/webhooks", { body: { url, events: ["run.failed", "run.failed"] } }, token), "events");
    await expectInvalid(await api("/v1/webhooks", { body: { url, events: ["run.failed"], agent_id: "nobody" } }, token), "agent_id");
    await expectInvalid(await api("/v1/webhooks", { body: { url, events: ["run.failed"], secret: "mine" } }, token), "secret");
    expect(await (await api("/v1/webhooks", {}, token)).json()).toEqual({ data: [], next_cursor: null });
  });

  it("refuses a private or plain-http URL outside development, at creation and when sending", async () => {
    const production = Object.create(env, { ENVIRONMENT: { value: "production" } }) as Env;
    for (const url of ["https://10.0.0.8/hook", "https://127.0.0.1/hook", "https://[::1]/hook", "http://example.com/hook"]) {
      const request = apiRequest("/v1/webhooks", { body: { url, events: ["run.completed"] } }) as Parameters<typeof worker.fetch>[0];
      const response = await worker.fetch(request, production, createExecutionContext());
      await expectInvalid(response, "url");
    }
    const delivery = {
      id: "msg_1",
      eventType: "run.completed",
      eventAt: "",
      runId: "r",
      sessionId: "s",
      agentId: "a",
      runStatus: "completed",
    };
    const outcome = await attemptDelivery(
      delivery as never,
      { url: receiverUrl("private"), secret: "whsec_AAAA" },
      {
        environment: "production",
        timeoutMs: 1000,
      },
    );
    expect(outcome).toEqual({ ok: false, status_code: null, outcome: "url refused: must use https" });
    expect(await received("private")).toEqual([]);
  });

  it("answers 404 to another tenant for every route, and deleting removes the webhook and its deliveries", async () => {
    const token = await createTenantToken();
    const other = await createTenantToken();
    const agent = await createAgent({}, token);
    const bucket = crypto.randomUUID();
    const webhook = await createWebhook(token, bucket, { events: ["run.completed"] });
    const run = await runTurn(agent.id, { input: "hi" }, token);
    await receivedFor(bucket, run.id, 1);
    const delivery = await deliveryWhen(token, webhook.id, (d) => d.status === "delivered");
    const routes = [
      () => api(`/v1/webhooks/${webhook.id}`, {}, other),
      () => api(`/v1/webhooks/${webhook.id}/deliveries`, {}, other),
      () => api(`/v1/webhooks/${webhook.id}/deliveries/${delivery.id}/redeliver`, { method: "POST" }, other),
      () => api(`/v1/webhooks/${webhook.id}`, { method: "DELETE" }, other),
    ];
    for (const route of routes) expect((await route()).status).toBe(404);
    expect(await (await api("/v1/webhooks", {}, other)).json()).toEqual({ data: [], next_cursor: null });
    expect((await api(`/v1/webhooks/${webhook.id}`, { method: "DELETE" }, token)).status).toBe(204);
    for (const route of routes) expect((await route()).status).toBe(404);
    expect((await api(`/v1/webhooks/${webhook.id}`, { method: "DELETE" }, token)).status).toBe(404);
  });
});

/**
 * A tenant subscribed to every run event, with an agent that pauses (`ask`), one that holds in a
 * gated tool (to cancel) and one that holds a session busy (to queue a turn behind it).
 */
async function lifecycleSubscriber() {
  const token = await createTenantToken();
  const gates = [crypto.randomUUID(), crypto.randomUUID()];
  const agent = await createAgent({ tools: [askUser] }, token);
  const held = await createAgent({ tools: [gateTool(gates[0] ?? "")] }, token);
  const queuing = await createAgent({ tools: [gateTool(gates[1] ?? "")] }, token);
  const bucket = crypto.randomUUID();
  await createWebhook(token, bucket, { events: RUN_EVENTS });
  return { token, gates, agent, held, queuing, bucket };
}

describe("lifecycle events", () => {
  it("delivers each run event of blocking runs, verified with standardwebhooks", async () => {
    const { token, gates, agent, held, queuing, bucket } = await lifecycleSubscriber();

    const completed = await runTurn(agent.id, { input: "hello" }, token);
    await expectEvent(bucket, completed, "run.completed", "completed");
    const failed = await runTurn(agent.id, { input: "[[fail 400 x1]] no" }, token);
    expect(failed.status).toBe("error");
    await expectEvent(bucket, failed, "run.failed", "error");
    const paused = await runTurn(agent.id, { input: "[[tool ask {}]]" }, token);
    expect(paused.status).toBe("paused");
    await expectEvent(bucket, paused, "run.paused", "paused");

    const cancelledSession = `s-${crypto.randomUUID()}`;
    const cancelling = postRun(held.id, { input: "[[tool wait {}]]", session_id: cancelledSession }, token);
    await callsReceived(gates[0] ?? "", 1);
    const cancelledId = await activeRunOf(token, cancelledSession);
    await cancel(token, held.id, cancelledId);
    expect((await (await cancelling).json<Run>()).status).toBe("cancelled");
    await expectEvent(bucket, { id: cancelledId, session_id: cancelledSession, agent_id: held.id }, "run.cancelled", "cancelled");

    const busySession = `s-${crypto.randomUUID()}`;
    const first = postRun(queuing.id, { input: "[[tool wait {}]]", session_id: busySession }, token);
    await callsReceived(gates[1] ?? "", 1);
    const second = postRun(queuing.id, { input: "next", session_id: busySession, on_busy: "enqueue" }, token);
    let queuedCall: Payload | undefined;
    for (let count = 1; !queuedCall; count++) {
      queuedCall = (await received(bucket, count)).map((c) => c.payload as Payload).find((p) => p.type === "run.queued");
    }
    await openGate(gates[1] ?? "");
    const [, queued] = await Promise.all([first, second].map(async (r) => (await r).json<Run>()));
    expect(queuedCall.data).toEqual({ run_id: queued?.id, session_id: busySession, agent_id: queuing.id, status: "queued" });
    await expectEvent(bucket, queued as Run, "run.completed", "completed");
  });

  it("delivers each run event of background runs", async () => {
    const { token, gates, agent, held, queuing, bucket } = await lifecycleSubscriber();
    const background = async (agentId: string, body: Record<string, unknown>) => {
      const response = await postRun(agentId, { ...body, background: true }, token);
      expect(response.status).toBe(202);
      const { run_id, session_id } = await response.json<{ run_id: string; session_id: string }>();
      return { id: run_id, session_id, agent_id: agentId };
    };
    await expectEvent(bucket, await background(agent.id, { input: "hello" }), "run.completed", "completed");
    await expectEvent(bucket, await background(agent.id, { input: "[[fail 400 x1]] no" }), "run.failed", "error");
    await expectEvent(bucket, await background(agent.id, { input: "[[tool ask {}]]" }), "run.paused", "paused");

    const running = await background(held.id, { input: "[[tool wait {}]]" });
    await callsReceived(gates[0] ?? "", 1);
    await cancel(token, held.id, running.id);
    await expectEvent(bucket, running, "run.cancelled", "cancelled");

    const first = await background(queuing.id, { input: "[[tool wait {}]]" });
    await callsReceived(gates[1] ?? "", 1);
    const queued = await background(queuing.id, { input: "next", session_id: first.session_id, on_busy: "enqueue" });
    await expectEvent(bucket, queued, "run.queued", "queued");
    await openGate(gates[1] ?? "");
    await expectEvent(bucket, queued, "run.completed", "completed");
  });

  it("adds OpenAI's response.* events for runs made through /v1/responses, and only for them", async () => {
    const token = await createTenantToken();
    const gate = crypto.randomUUID();
    const agent = await createAgent({}, token);
    const held = await createAgent({ tools: [gateTool(gate)] }, token);
    const bucket = crypto.randomUUID();
    const webhook = await createWebhook(token, bucket, { events: RESPONSE_EVENTS });
    const client = agentryOpenAI(token);
    const ofResponse = (response: { id: string; conversation?: { id: string } | null }, agentId = agent.id) => ({
      id: response.id,
      session_id: response.conversation?.id ?? "",
      agent_id: agentId,
    });

    await runTurn(agent.id, { input: "not through responses" }, token);
    const cases: [string, string, string][] = [
      ["hello", "response.completed", "completed"],
      ["[[fail 400 x1]] no", "response.failed", "failed"],
      ["[[truncate 2]] a long answer", "response.incomplete", "incomplete"],
    ];
    for (const background of [false, true]) {
      for (const [input, type, status] of cases) {
        const response = await client.responses.create({ model: agent.id, input, background });
        await expectEvent(bucket, ofResponse(response), type, status);
      }
    }
    const running = await client.responses.create({ model: held.id, input: "[[tool wait {}]]", background: true });
    await callsReceived(gate, 1);
    await client.responses.cancel(running.id);
    await expectEvent(bucket, ofResponse(running, held.id), "response.cancelled", "cancelled");
    const conversation = `c-${crypto.randomUUID()}`;
    const blocking = client.responses.create({ model: held.id, input: "[[tool wait {}]]", conversation });
    await callsReceived(gate, 2);
    const blockingId = await activeRunOf(token, conversation);
    await client.responses.cancel(blockingId);
    expect((await blocking).status).toBe("cancelled");
    await expectEvent(bucket, { id: blockingId, session_id: conversation, agent_id: held.id }, "response.cancelled", "cancelled");
    // The run made on Agentry's own route made no response.* delivery (and no run.* one: not asked for).
    expect((await deliveries(token, webhook.id)).map((d) => d.event_type).sort()).toEqual(
      [...cases, ...cases]
        .map(([, type]) => type)
        .concat("response.cancelled", "response.cancelled")
        .sort(),
    );
  });

  it("filters by agent_id", async () => {
    const token = await createTenantToken();
    const [mine, other] = [await createAgent({}, token), await createAgent({}, token)];
    const [filtered, all] = [crypto.randomUUID(), crypto.randomUUID()];
    const onlyMine = await createWebhook(token, filtered, { events: ["run.completed"], agent_id: mine.id });
    await createWebhook(token, all, { events: ["run.completed"] });
    const otherRun = await runTurn(other.id, { input: "other" }, token);
    const mineRun = await runTurn(mine.id, { input: "mine" }, token);
    await receivedFor(all, otherRun.id, 1);
    await receivedFor(all, mineRun.id, 1);
    await receivedFor(filtered, mineRun.id, 1);
    expect((await deliveries(token, onlyMine.id)).map((d) => d.run_id)).toEqual([mineRun.id]);
  });
});

describe("durability", () => {
  it("keeps a stored event's deliveries through a D1 outage and the object's death, and sends them once D1 is back", async () => {
    // The admin's tenant (the D1 helpers wrap its objects), with a webhook filtered to this test's own agent.
    const agent = await createAgent();
    const bucket = crypto.randomUUID();
    const webhook = await createWebhook(ADMIN_TOKEN, bucket, { events: ["run.completed"], agent_id: agent.id });
    const sessionId = `webhook-outage-${crypto.randomUUID()}`;
    await runTurn(agent.id, { input: "first", session_id: sessionId });
    await wrapSessionD1(sessionId, async () => {
      throw new Error("D1 is down");
    });
    const run = await runTurn(agent.id, { input: "during the outage", session_id: sessionId });
    expect(run.status).toBe("completed");
    // The object dies with the delivery only in its outbox: D1 has none yet.
    await abortAllDurableObjects();
    expect((await deliveries(ADMIN_TOKEN, webhook.id)).filter((d) => d.run_id === run.id)).toEqual([]);
    await runInDurableObject(sessionStub(sessionId), (_instance, state) => {
      state.storage.sql.exec("UPDATE timers SET due_at = 0 WHERE name = 'outbox'");
    });
    await runDurableObjectAlarm(sessionStub(sessionId));
    const [call] = await receivedFor(bucket, run.id, 1);
    expect(call).toMatchObject({ verified: true, payload: { type: "run.completed", data: { run_id: run.id } } });
    expect((await api(`/v1/webhooks/${webhook.id}`, { method: "DELETE" })).status).toBe(204);
  });
});

describe("attempts", () => {
  it("retries a failing receiver with the same webhook-id until it answers 2xx, counting attempts", async () => {
    const token = await createTenantToken();
    const agent = await createAgent({}, token);
    const bucket = crypto.randomUUID();
    const webhook = await createWebhook(token, bucket, { events: ["run.completed"], query: "fail=2" });
    const run = await runTurn(agent.id, { input: "hi" }, token);
    const calls = await receivedFor(bucket, run.id, 3);
    expect(calls.map((c) => [c.verified, c.answered])).toEqual([
      [true, 500],
      [true, 500],
      [true, 200],
    ]);
    expect(new Set(calls.map((c) => c.webhook_id)).size).toBe(1);
    const delivery = await deliveryWhen(token, webhook.id, (d) => d.status === "delivered");
    expect(delivery).toMatchObject({ id: calls[0]?.webhook_id, attempts: 3, last_status_code: 200, next_attempt_at: null });
  });

  it("counts a receiver that does not answer in time, and one that redirects (not followed), as failed attempts", async () => {
    const token = await createTenantToken();
    const agent = await createAgent({}, token);
    const [hung, redirecting] = [crypto.randomUUID(), crypto.randomUUID()];
    const hook = await createWebhook(token, hung, { events: ["run.completed"], query: "mode=hang" });
    const redirect = await createWebhook(token, redirecting, { events: ["run.completed"], query: "mode=redirect" });
    const run = await runTurn(agent.id, { input: "hi" }, token);
    await receivedFor(hung, run.id, 2);
    await receivedFor(redirecting, run.id, 2);
    expect(await deliveryWhen(token, hook.id, (d) => d.attempts >= 1)).toMatchObject({ last_status_code: null });
    expect(await deliveryWhen(token, redirect.id, (d) => d.attempts >= 1)).toMatchObject({ last_status_code: 302 });
    expect(await received(`${redirecting}-redirected`)).toEqual([]);
    for (const id of [hook.id, redirect.id]) expect((await api(`/v1/webhooks/${id}`, { method: "DELETE" }, token)).status).toBe(204);
  });

  it("follows the schedule (5 s, 30 s, 2 min, 10 min, 1 h, 3 h, then every 6 h) and is dead after 24 h of failures", async () => {
    const tenant = `t-${crypto.randomUUID()}`;
    const token = await createTenantToken(tenant);
    const bucket = crypto.randomUUID();
    const webhook = await createWebhook(token, bucket, { events: ["run.completed"], query: "fail=1000" });
    const id = await pendingDelivery(tenant, webhook.id);
    const { env: recording, sent } = recordingEnv({ WEBHOOK_RETRY_SCALE: "1" });
    let message: WebhookMessage | undefined = { tenant, delivery_id: id, attempt: 0 };
    const delays: (number | undefined)[] = [];
    while (message) {
      await consume([message], recording);
      const next = sent.shift();
      delays.push(next?.delaySeconds);
      message = next?.body;
    }
    expect(delays).toEqual([...RETRY_DELAYS_SECONDS, undefined]);
    expect(RETRY_DELAYS_SECONDS.reduce((a, b) => a + b, 0)).toBeLessThan(24 * 3600);
    const calls = await received(bucket, 10);
    expect(calls).toHaveLength(10);
    expect(new Set(calls.map((c) => c.webhook_id))).toEqual(new Set([id]));
    expect((await deliveries(token, webhook.id))[0]).toMatchObject({
      id,
      attempts: 10,
      status: "dead",
      last_status_code: 500,
      next_attempt_at: null,
    });
    // A duplicate of an old message sends nothing.
    await consume([{ tenant, delivery_id: id, attempt: 3 }], recording);
    expect(sent).toEqual([]);
    expect(await received(bucket)).toHaveLength(10);
  });

  it("redelivers with the same webhook-id, and a deleted webhook's deliveries send nothing", async () => {
    const token = await createTenantToken();
    const agent = await createAgent({}, token);
    const bucket = crypto.randomUUID();
    const webhook = await createWebhook(token, bucket, { events: ["run.completed"] });
    const run = await runTurn(agent.id, { input: "hi" }, token);
    const [first] = await receivedFor(bucket, run.id, 1);
    const delivery = await deliveryWhen(token, webhook.id, (d) => d.status === "delivered");
    const response = await api(`/v1/webhooks/${webhook.id}/deliveries/${delivery.id}/redeliver`, { method: "POST" }, token);
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ delivery_id: delivery.id });
    const [, again] = await receivedFor(bucket, run.id, 2);
    expect(again).toMatchObject({ webhook_id: first?.webhook_id, verified: true, payload: first?.payload });
    await deliveryWhen(token, webhook.id, (d) => d.attempts === 2 && d.status === "delivered");

    const tenant = `t-${crypto.randomUUID()}`;
    const deleted = await createWebhook(await createTenantToken(tenant), `${bucket}-deleted`, { events: ["run.completed"] });
    const pending = await pendingDelivery(tenant, deleted.id);
    expect((await api(`/v1/webhooks/${deleted.id}`, { method: "DELETE" }, ADMIN_TOKEN)).status).toBe(404);
    const { env: recording, sent } = recordingEnv();
    const owner = await createTenantToken(tenant, "owner");
    expect((await api(`/v1/webhooks/${deleted.id}`, { method: "DELETE" }, owner)).status).toBe(204);
    await consume([{ tenant, delivery_id: pending, attempt: 0 }], recording);
    expect(sent).toEqual([]);
    expect(await received(`${bucket}-deleted`)).toEqual([]);
  });

  it("puts deliveries whose attempt is overdue back on the queue (the Cron sweep)", async () => {
    const tenant = `t-${crypto.randomUUID()}`;
    const webhook = await createWebhook(await createTenantToken(tenant), crypto.randomUUID(), { events: ["run.completed"] });
    const id = await pendingDelivery(tenant, webhook.id);
    const { env: recording, sent } = recordingEnv();
    await sweepWebhookDeliveries(recording, new Date(Date.now() + 30_000));
    expect(sent.filter((s) => s.body.delivery_id === id)).toEqual([]);
    await sweepWebhookDeliveries(recording, new Date(Date.now() + 120_000));
    expect(sent.filter((s) => s.body.delivery_id === id)).toEqual([
      { body: { tenant, delivery_id: id, attempt: 0 }, delaySeconds: undefined },
    ]);
  });

  it("deletes ended deliveries with the stored events, and keeps those still retrying", async () => {
    const tenant = `t-${crypto.randomUUID()}`;
    const token = await createTenantToken(tenant);
    const webhook = await createWebhook(token, crypto.randomUUID(), { events: ["run.completed"] });
    const old = new Date(Date.now() - 40 * 86_400_000).toISOString();
    const retrying = await pendingDelivery(tenant, webhook.id, { status: "failed", attempts: 9, createdAt: old, nextAttemptAt: null });
    await pendingDelivery(tenant, webhook.id, { status: "delivered", attempts: 1, createdAt: old, nextAttemptAt: null });
    await pendingDelivery(tenant, webhook.id, { status: "dead", attempts: 10, createdAt: old, nextAttemptAt: null });
    await applyRetention(env, new Date());
    expect((await deliveries(token, webhook.id)).map((d) => d.id)).toEqual([retrying]);
  });
});

describe("typed client (client/)", () => {
  it("creates, lists, reads and deletes webhooks, and lists and redelivers deliveries", async () => {
    const client = testClient({ token: await createTenantToken() });
    const agent = await client.createAgent({ name: "hooked", provider: "mock", model: "mock-1" });
    const bucket = crypto.randomUUID();
    const created = await client.createWebhook({ url: receiverUrl(bucket), events: ["run.completed"], agent_id: agent.id });
    expect(created.secret).toMatch(/^whsec_/);
    await giveSecret(bucket, created.secret ?? "");
    const { secret: _, ...webhook } = created;
    expect(await client.listWebhooks({ limit: 5 })).toEqual({ data: [webhook], next_cursor: null });
    expect(await client.getWebhook(webhook.id)).toEqual(webhook);
    const run = await client.run(agent.id, { input: "hi" });
    await receivedFor(bucket, run.id, 1);
    let page = await client.listDeliveries(webhook.id);
    while (page.data[0]?.status !== "delivered") {
      await scheduler.wait(20);
      page = await client.listDeliveries(webhook.id);
    }
    const [delivery] = page.data;
    expect(delivery).toMatchObject({ event_type: "run.completed", run_id: run.id, attempts: 1 });
    expect(await client.redeliver(webhook.id, delivery?.id ?? "")).toEqual({ delivery_id: delivery?.id });
    await receivedFor(bucket, run.id, 2);
    await client.deleteWebhook(webhook.id);
    await expect(client.getWebhook(webhook.id)).rejects.toMatchObject({ status: 404, type: "not_found" });
  });
});
