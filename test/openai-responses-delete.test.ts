import { env } from "cloudflare:workers";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { api, createAgent } from "./support/http";
import { agentryOpenAI } from "./support/openai-sdk";
import { deliverRunMessages, holdRunQueue } from "./support/run-queue";
import { transcriptOf } from "./support/runs";

/** What the SDK's `delete` received (it answers nothing itself): the status and the body. */
async function deleteResponse(client: OpenAI, id: string) {
  const response = await client.responses.delete(id).asResponse();
  return { status: response.status, body: await response.json() };
}

describe("DELETE /v1/responses/{id}", () => {
  it("deletes a stopped response from /v1/responses while its session keeps the turn", async () => {
    const agent = await createAgent();
    const client = agentryOpenAI();
    const first = await client.responses.create({ model: agent.id, input: "remember the tulips" });
    expect(await deleteResponse(client, first.id)).toEqual({ status: 200, body: { id: first.id, object: "response", deleted: true } });

    const gone = [
      () => client.responses.retrieve(first.id),
      () => client.responses.inputItems.list(first.id),
      () => client.responses.cancel(first.id),
      () => client.responses.delete(first.id),
      () => client.responses.create({ model: agent.id, input: "and then?", previous_response_id: first.id }),
    ];
    for (const request of gone) {
      const error = await request().then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      expect((error as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({
        type: "invalid_request_error",
        code: "not_found",
      });
    }

    // The run and the session's transcript stay: Agentry's own API shows them, and the conversation goes on.
    expect((await api(`/v1/agents/${agent.id}/runs/${first.id}`)).status).toBe(200);
    const next = await client.responses.create({ model: agent.id, input: "and then?", conversation: first.conversation?.id });
    expect(next.output_text).toBe("You said: and then?");
    const transcript = await transcriptOf(String(first.conversation?.id));
    expect(transcript.map((m) => [m.run_id, m.role])).toEqual([
      [first.id, "user"],
      [first.id, "assistant"],
      [next.id, "user"],
      [next.id, "assistant"],
    ]);

    // Deleting the session removes the record of its deleted response with the rest of its rows.
    const deletedRows = async () =>
      (await env.DB.prepare("SELECT count(*) AS n FROM deleted_responses WHERE run_id = ?").bind(first.id).first<{ n: number }>())?.n;
    expect(await deletedRows()).toBe(1);
    expect((await api(`/v1/sessions/${String(first.conversation?.id)}`, { method: "DELETE" })).status).toBe(204);
    expect(await deletedRows()).toBe(0);
  });

  it("refuses to delete a queued response (409, not retried by the SDK) until it is cancelled", async () => {
    const agent = await createAgent();
    const sent: string[] = [];
    const client = agentryOpenAI(undefined, sent);
    const conversation = `del-${crypto.randomUUID()}`;
    const held = await holdRunQueue(conversation);
    const queued = await client.responses.create({ model: agent.id, input: "later", conversation, background: true });
    sent.length = 0;
    const error = await client.responses.delete(queued.id).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(OpenAI.ConflictError);
    expect((error as InstanceType<typeof OpenAI.ConflictError>).error).toMatchObject({ code: "response_active" });
    expect(sent).toEqual([`DELETE /v1/responses/${queued.id}`]);
    expect((await client.responses.retrieve(queued.id)).status).toBe("queued");

    await client.responses.cancel(queued.id);
    await deliverRunMessages(held);
    expect(await deleteResponse(client, queued.id)).toEqual({ status: 200, body: { id: queued.id, object: "response", deleted: true } });
  });

  it("refuses to delete a response that waits for its function call outputs", async () => {
    const agent = await createAgent();
    const client = agentryOpenAI();
    const tool = { type: "function" as const, name: "lookup", parameters: { type: "object", properties: {} }, strict: false };
    const asked = await client.responses.create({ model: agent.id, input: "[[tool lookup {}]] look", tools: [tool] });
    const error = await client.responses.delete(asked.id).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(OpenAI.ConflictError);
    expect((error as InstanceType<typeof OpenAI.ConflictError>).message).toMatch(/waits for its function call outputs/);
  });
});
