import { env } from "cloudflare:workers";
import { expect } from "vitest";
import type { ReceivedWebhook } from "../node/webhook-receiver";
import { api } from "./http";

export type { ReceivedWebhook };

/** A delivery as `GET /v1/webhooks/{id}/deliveries` lists it. */
export type Delivery = {
  id: string;
  event_type: string;
  run_id: string;
  session_id: string;
  attempts: number;
  status: "pending" | "delivered" | "failed" | "dead";
  last_status_code: number | null;
  next_attempt_at: string | null;
  created_at: string;
};

export type CreatedWebhook = {
  id: string;
  url: string;
  events: string[];
  agent_id: string | null;
  secret: string | null;
  created_at: string;
};

/** The URL of the test receiver's `bucket` (test/node/webhook-receiver.ts); `query` picks its behaviour. */
export const receiverUrl = (bucket: string, query = "") => `${env.TOOL_SERVER_URL}/hook/${bucket}${query ? `?${query}` : ""}`;

/**
 * Creates a webhook of the token's tenant pointing at the receiver's `bucket`, and gives the
 * receiver its secret (as an operator pastes it into the receiving app).
 */
export async function createWebhook(
  token: string,
  bucket: string,
  fields: { events: string[]; agent_id?: string; query?: string },
): Promise<CreatedWebhook> {
  const { query, ...rest } = fields;
  const response = await api("/v1/webhooks", { body: { url: receiverUrl(bucket, query), ...rest } }, token);
  expect(response.status, await response.clone().text()).toBe(201);
  const webhook = await response.json<CreatedWebhook>();
  await giveSecret(bucket, webhook.secret ?? "");
  return webhook;
}

/** Gives the receiver's `bucket` the webhook's signing secret, which it verifies every call with. */
export async function giveSecret(bucket: string, secret: string): Promise<void> {
  await fetch(`${env.TOOL_SERVER_URL}/hook-secret/${bucket}`, { method: "POST", body: secret });
}

/** The calls the receiver's `bucket` got, once it has at least `count`. */
export async function received(bucket: string, count = 0): Promise<ReceivedWebhook[]> {
  const response = await fetch(`${env.TOOL_SERVER_URL}/hooks/${bucket}?count=${count}`);
  return response.json<ReceivedWebhook[]>();
}

/** The payload of a received call, as the receiver parsed it after verifying it. */
export type Payload = { type: string; timestamp: string; data: { run_id: string; session_id: string; agent_id: string; status: string } };

/** The calls of `bucket` about `runId` once there are `count` of them (other runs' calls may come first). */
export async function receivedFor(bucket: string, runId: string, count: number): Promise<ReceivedWebhook[]> {
  for (let total = count; ; total++) {
    const calls = await received(bucket, total);
    const mine = calls.filter((call) => (call.payload as Payload).data?.run_id === runId);
    if (mine.length >= count) return mine;
  }
}

export async function deliveries(token: string, webhookId: string): Promise<Delivery[]> {
  const response = await api(`/v1/webhooks/${webhookId}/deliveries?limit=100`, {}, token);
  expect(response.status).toBe(200);
  return (await response.json<{ data: Delivery[] }>()).data;
}
