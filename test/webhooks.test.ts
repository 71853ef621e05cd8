import { describe, expect, it } from "vitest";
import { api, createAgent, createTenantToken } from "./support/http";
import { runTurn } from "./support/runs";
import { createWebhook, deliveries, receivedFor, type Payload } from "./support/webhooks";

const ALL_RUN_EVENTS = ["run.completed", "run.failed", "run.cancelled", "run.paused", "run.queued"];

describe("lifecycle webhooks", () => {
  it("delivers run.completed of a blocking run, signed per Standard Webhooks", async () => {
    const token = await createTenantToken();
    const agent = await createAgent({}, token);
    const bucket = crypto.randomUUID();
    const webhook = await createWebhook(token, bucket, { events: ALL_RUN_EVENTS });
    const run = await runTurn(agent.id, { input: "hello" }, token);
    const [call] = await receivedFor(bucket, run.id, 1);
    expect(call?.verified).toBe(true);
    expect(call?.payload).toEqual({
      type: "run.completed",
      timestamp: expect.any(String),
      data: { run_id: run.id, session_id: run.session_id, agent_id: agent.id, status: "completed" },
    } satisfies Payload);
    const [delivery] = await deliveries(token, webhook.id);
    expect(delivery).toMatchObject({
      id: call?.webhook_id,
      event_type: "run.completed",
      run_id: run.id,
      attempts: 1,
      status: "delivered",
      last_status_code: 200,
      next_attempt_at: null,
    });
    void api;
  });
});
