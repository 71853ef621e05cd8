import type { FunctionTool, ResponseOutputItem, ResponseStreamEvent } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import { api, createAgent } from "./support/http";
import { agentryOpenAI } from "./support/openai-sdk";
import type { Run, RunEvent } from "./support/runs";

const weather: FunctionTool = {
  type: "function",
  name: "get_weather",
  parameters: { type: "object", properties: { city: { type: "string" } } },
  strict: false,
};
const ASK = '[[tool get_weather {"city":"Paris"}]] weather?';

const collect = async (stream: AsyncIterable<ResponseStreamEvent>) => {
  const events: ResponseStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
};
const deltasOf = (events: ResponseStreamEvent[]) =>
  events.flatMap((e) => (e.type === "response.output_text.delta" ? [e.delta] : [])).join("");
const callOf = (output: ResponseOutputItem[]) => {
  const call = output.find((item) => item.type === "function_call");
  if (call?.type !== "function_call") throw new Error("expected a function_call item");
  return call.call_id;
};
const answer = (callId: string) => [{ type: "function_call_output" as const, call_id: callId, output: "sunny" }];

describe("continuations of a paused response", () => {
  it("streams a function_call_output continuation, numbered on from the paused stretch, to the final answer", async () => {
    const agent = await createAgent();
    const client = agentryOpenAI();
    const asked = await client.responses.create({ model: agent.id, input: ASK, tools: [weather] });
    const paused = await collect(await client.responses.retrieve(asked.id, { stream: true }));
    expect(paused.at(-1)).toMatchObject({
      type: "response.completed",
      response: { status: "completed", output: [{ type: "function_call", name: "get_weather" }] },
    });

    const events = await collect(
      await client.responses.create({
        model: agent.id,
        previous_response_id: asked.id,
        input: answer(callOf(asked.output)),
        tools: [weather],
        stream: true,
      }),
    );
    const first = paused.length;
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => first + i));
    expect(events.map((e) => e.type).filter((t) => t !== "response.output_text.delta")).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(deltasOf(events)).toBe("You said: weather?\nget_weather returned: sunny");
    const completed = events.at(-1);
    if (completed?.type !== "response.completed") throw new Error("expected response.completed last");
    expect(completed.response).toMatchObject({
      id: asked.id,
      status: "completed",
      output: [{ type: "message", content: [{ type: "output_text", text: "You said: weather?\nget_weather returned: sunny" }] }],
    });

    // The same stretch read again from where the pause ended.
    const resumed = await collect(await client.responses.retrieve(asked.id, { stream: true, starting_after: first - 1 }));
    expect(resumed.map((e) => [e.sequence_number, e.type])).toEqual(events.map((e) => [e.sequence_number, e.type]));
  });

  it("resumes a dropped stream of a response that pauses on a client call: it ends at the pause, with the call", async () => {
    const agent = await createAgent();
    const client = agentryOpenAI();
    const first: ResponseStreamEvent[] = [];
    for await (const event of await client.responses.create({ model: agent.id, input: ASK, tools: [weather], stream: true })) {
      first.push(event);
      if (first.length === 3) break;
    }
    const created = first[0];
    if (created?.type !== "response.created") throw new Error("expected response.created first");
    const id = created.response.id;
    const resumed = await collect(await client.responses.retrieve(id, { stream: true, starting_after: 2 }));
    expect(resumed[0]?.sequence_number).toBe(3);
    const whole = await collect(await client.responses.retrieve(id, { stream: true }));
    expect([...first, ...resumed].map((e) => [e.sequence_number, e.type])).toEqual(whole.map((e) => [e.sequence_number, e.type]));
    const end = resumed.at(-1);
    if (end?.type !== "response.completed") throw new Error("expected the stream to end with response.completed");
    expect(end.response.output).toEqual([
      expect.objectContaining({ type: "function_call", name: "get_weather", arguments: '{"city":"Paris"}' }),
    ]);
    expect(resumed.filter((e) => e.type === "response.function_call_arguments.done")).toHaveLength(1);

    // Once the run has gone on, the paused stretch still reads the same, and still ends at its pause.
    await client.responses.create({
      model: agent.id,
      previous_response_id: id,
      input: answer(callOf(end.response.output)),
      tools: [weather],
    });
    const again = await collect(await client.responses.retrieve(id, { stream: true, starting_after: 2 }));
    expect(again.map((e) => [e.sequence_number, e.type])).toEqual(resumed.map((e) => [e.sequence_number, e.type]));
    expect(again.at(-1)).toMatchObject({
      type: "response.completed",
      response: { output: [{ type: "function_call", call_id: callOf(end.response.output) }] },
    });
  });

  it("answers a retried function_call_output request with the same Idempotency-Key with the same response, continuing nothing twice", async () => {
    const agent = await createAgent();
    const client = agentryOpenAI();
    const asked = await client.responses.create({ model: agent.id, input: ASK, tools: [weather] });
    const body = { model: agent.id, previous_response_id: asked.id, input: answer(callOf(asked.output)), tools: [weather] };
    // The SDK's own `idempotencyKey` option sends nothing (the OpenAI client names no idempotency header): the header does.
    const headers = { "Idempotency-Key": `continue-${crypto.randomUUID()}` };
    const answered = await client.responses.create(body, { headers });
    const retried = await client.responses.create(body, { headers });
    expect(retried).toEqual(answered);
    expect(retried).toMatchObject({ id: asked.id, status: "completed", output_text: "You said: weather?\nget_weather returned: sunny" });

    const run = await (await api(`/v1/agents/${agent.id}/runs/${asked.id}`)).json<Run>();
    expect(run.metrics.model_calls).toBe(2);
    const { data } = await (await api(`/v1/agents/${agent.id}/runs/${asked.id}/events`)).json<{ data: RunEvent[] }>();
    expect(data.filter((e) => e.type === "run_continued")).toHaveLength(1);
    expect(data.filter((e) => e.type === "run_completed")).toHaveLength(1);
  });

  it("answers a retried streamed continuation with the same Idempotency-Key with the same stream of that stretch", async () => {
    const agent = await createAgent();
    const client = agentryOpenAI();
    const asked = await client.responses.create({ model: agent.id, input: ASK, tools: [weather] });
    const body = {
      model: agent.id,
      previous_response_id: asked.id,
      input: answer(callOf(asked.output)),
      tools: [weather],
      stream: true as const,
    };
    const headers = { "Idempotency-Key": `continue-stream-${crypto.randomUUID()}` };
    const first = await collect(await client.responses.create(body, { headers }));
    const retried = await collect(await client.responses.create(body, { headers }));
    expect(retried.map((e) => [e.sequence_number, e.type])).toEqual(first.map((e) => [e.sequence_number, e.type]));
    expect(deltasOf(retried)).toBe("You said: weather?\nget_weather returned: sunny");
    const { data } = await (await api(`/v1/agents/${agent.id}/runs/${asked.id}/events`)).json<{ data: RunEvent[] }>();
    expect(data.filter((e) => e.type === "run_continued")).toHaveLength(1);
  });
});
