import { describe, expect, it } from "vitest";
import { api, createAgent } from "./support/http";
import { agentryOpenAI } from "./support/openai-sdk";
import { deliverRunMessages, holdRunQueue } from "./support/run-queue";
import { callsReceived, gateTool, openGate } from "./support/tool-server";

describe("background responses", () => {
  it("queues a background response, which retrieve shows queued until the queue runs it, then completed", async () => {
    const agent = await createAgent();
    const client = agentryOpenAI();
    const conversation = `bg-${crypto.randomUUID()}`;
    const held = await holdRunQueue(conversation);
    const queued = await client.responses.create({ model: agent.id, input: "later", conversation, background: true });
    expect(queued).toMatchObject({ status: "queued", output: [] });
    expect((await client.responses.retrieve(queued.id)).status).toBe("queued");
    expect(held).toHaveLength(1);
    await deliverRunMessages(held);
    const done = await client.responses.retrieve(queued.id);
    expect(done).toMatchObject({ id: queued.id, status: "completed", output_text: "You said: later" });
  });

  it("cancels a queued response, which the queue then never runs; cancelling again answers the same", async () => {
    const agent = await createAgent();
    const client = agentryOpenAI();
    const conversation = `bg-cancel-${crypto.randomUUID()}`;
    const held = await holdRunQueue(conversation);
    const queued = await client.responses.create({ model: agent.id, input: "never", conversation, background: true });
    const cancelled = await client.responses.cancel(queued.id);
    expect(cancelled).toMatchObject({ id: queued.id, status: "cancelled", output: [] });
    await deliverRunMessages(held);
    expect((await client.responses.retrieve(queued.id)).status).toBe("cancelled");
    expect((await client.responses.cancel(queued.id)).status).toBe("cancelled");
    const next = await client.responses.create({ model: agent.id, input: "after", conversation });
    expect(next.output_text).toBe("You said: after");
  });
});

describe("a response on a busy conversation", () => {
  it("follows the agent's on_busy, its steer taken as enqueue: the response is queued and answered in turn", async () => {
    const bucket = crypto.randomUUID();
    const agent = await createAgent({ on_busy: "steer", tools: [gateTool(bucket)] });
    const client = agentryOpenAI();
    const conversation = `busy-${crypto.randomUUID()}`;
    const first = await client.responses.create({ model: agent.id, input: "[[tool wait {}]] first", conversation, background: true });
    await callsReceived(bucket, 1);
    const second = await client.responses.create({ model: agent.id, input: "second", conversation, background: true });
    expect(second).toMatchObject({ status: "queued", output: [] });
    expect(second.id).not.toBe(first.id);
    await openGate(bucket);
    await api(`/v1/agents/${agent.id}/runs/${second.id}?wait=20`);
    expect(await client.responses.retrieve(second.id)).toMatchObject({ status: "completed", output_text: "You said: second" });
    expect((await client.responses.retrieve(first.id)).status).toBe("completed");
  });
});
