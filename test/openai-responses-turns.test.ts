import { runInDurableObject } from "cloudflare:test";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { SseReader } from "./support/events";
import { api, createAgent } from "./support/http";
import { agentryOpenAI } from "./support/openai-sdk";
import { sessionStub } from "./support/run-queue";
import { HOLD_MODEL, postRun, transcriptOf } from "./support/runs";

const sessionOfRun = async (agentId: string, runId: string) =>
  (await (await api(`/v1/agents/${agentId}/runs/${runId}`)).json<{ session_id: string }>()).session_id;

describe("multi-turn conversations over /v1/responses", () => {
  it("continues the session of previous_response_id, turn after turn", async () => {
    const agent = await createAgent();
    const client = agentryOpenAI();
    const first = await client.responses.create({ model: agent.id, input: "one" });
    const second = await client.responses.create({ model: agent.id, input: "two", previous_response_id: first.id });
    const third = await client.responses.create({ model: agent.id, input: "three", previous_response_id: second.id });
    expect([first.output_text, second.output_text, third.output_text]).toEqual(["You said: one", "You said: two", "You said: three"]);
    const sessionId = await sessionOfRun(agent.id, first.id);
    expect([second.conversation, third.conversation]).toEqual([{ id: sessionId }, { id: sessionId }]);
    const transcript = await transcriptOf(sessionId);
    expect(transcript.map((m) => [m.role, m.run_id])).toEqual([
      ["user", first.id],
      ["assistant", first.id],
      ["user", second.id],
      ["assistant", second.id],
      ["user", third.id],
      ["assistant", third.id],
    ]);
  });

  it("runs a turn on the session that conversation names, as a string or an object", async () => {
    const agent = await createAgent();
    const client = agentryOpenAI();
    const conversation = `conv-${crypto.randomUUID()}`;
    const first = await client.responses.create({ model: agent.id, input: "first", conversation });
    const second = await client.responses.create({ model: agent.id, input: "second", conversation: { id: conversation } });
    expect([first.conversation, second.conversation]).toEqual([{ id: conversation }, { id: conversation }]);
    expect((await transcriptOf(conversation)).map((m) => m.run_id)).toEqual([first.id, first.id, second.id, second.id]);
  });

  it("refuses previous_response_id together with conversation, and an unknown previous response", async () => {
    const agent = await createAgent();
    const client = agentryOpenAI();
    const first = await client.responses.create({ model: agent.id, input: "one" });
    const both = await client.responses
      .create({ model: agent.id, input: "x", previous_response_id: first.id, conversation: "c" })
      .catch((e: unknown) => e);
    expect(both).toBeInstanceOf(OpenAI.BadRequestError);
    expect((both as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ param: "conversation" });
    await expect(client.responses.create({ model: agent.id, input: "x", previous_response_id: "run_unknown" })).rejects.toBeInstanceOf(
      OpenAI.NotFoundError,
    );
    expect((await transcriptOf(await sessionOfRun(agent.id, first.id))).length).toBe(2);
  });

  it("answers 409 with x-should-retry: false on a session whose turn is active, which the SDK does not retry", async () => {
    const agent = await createAgent();
    const conversation = `busy-${crypto.randomUUID()}`;
    const held = new SseReader(await postRun(agent.id, { input: `${HOLD_MODEL} busy`, session_id: conversation, stream: true }));
    const [started] = await held.until("model_request_started");
    const sent: string[] = [];
    const error = await agentryOpenAI(undefined, sent)
      .responses.create({ model: agent.id, input: "now", conversation })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.ConflictError);
    const conflict = error as InstanceType<typeof OpenAI.ConflictError>;
    expect(conflict.status).toBe(409);
    expect(conflict.headers.get("x-should-retry")).toBe("false");
    expect(conflict.error).toMatchObject({ type: "invalid_request_error", code: "session_busy" });
    expect(sent).toEqual(["POST /v1/responses"]);
    const cancelled = await api(`/v1/agents/${agent.id}/runs/${started!.run_id}/cancel`, { method: "POST" });
    expect(cancelled.status).toBe(200);
    expect((await held.rest()).at(-1)?.type).toBe("run_cancelled");
  });

  it("continues a conversation after the session object's storage was wiped, from what D1 holds", async () => {
    const agent = await createAgent();
    const client = agentryOpenAI();
    const first = await client.responses.create({ model: agent.id, input: "remember the word apricot" });
    const sessionId = await sessionOfRun(agent.id, first.id);
    await runInDurableObject(sessionStub(sessionId), async (_instance, state) => {
      await state.storage.deleteAll();
    });
    expect(await client.responses.retrieve(first.id)).toMatchObject({ status: "completed", output: first.output });
    const second = await client.responses.create({ model: agent.id, input: "what word?", previous_response_id: first.id });
    expect(second).toMatchObject({ status: "completed", output_text: "You said: what word?", conversation: { id: sessionId } });
    const fresh = await client.responses.create({ model: agent.id, input: "what word?" });
    // The second model call carried the first turn: it is larger than the same turn in a new session.
    expect(second.usage?.input_tokens).toBeGreaterThan(fresh.usage?.input_tokens ?? 0);
    expect((await transcriptOf(sessionId)).map((m) => [m.role, m.run_id])).toEqual([
      ["user", first.id],
      ["assistant", first.id],
      ["user", second.id],
      ["assistant", second.id],
    ]);
  });
});
