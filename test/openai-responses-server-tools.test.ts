import type { Response, ResponseStreamEvent } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import { createAgent } from "./support/http";
import { agentryOpenAI } from "./support/openai-sdk";
import { deliverRunMessages, holdRunQueue } from "./support/run-queue";

const clock = { tools: [{ type: "builtin", name: "current_time" }] };
const ASK = "[[tool current_time {}]] what time is it";

/** The agent's own tool call, then its result, then the answer: the output a response with one server tool call has. */
function expectServerToolOutput(response: Pick<Response, "output" | "status">) {
  expect(response.status).toBe("completed");
  expect(response.output.map((item) => item.type)).toEqual(["function_call", "function_call_output", "message"]);
  const [call, result] = response.output;
  if (call?.type !== "function_call" || result?.type !== "function_call_output") throw new Error("expected a function_call and its output");
  expect(call).toMatchObject({ name: "current_time", arguments: "{}", status: "completed" });
  expect(result).toMatchObject({ call_id: call.call_id, status: "completed" });
  expect(JSON.parse(String(result.output))).toEqual({ utc: expect.any(String) });
  return call.call_id;
}

describe("the agent's own tools as output items", () => {
  it("shows a builtin tool's call and result before the answer, in a blocking response and its retrieve", async () => {
    const agent = await createAgent(clock);
    const client = agentryOpenAI();
    const response = await client.responses.create({ model: agent.id, input: ASK });
    expectServerToolOutput(response);
    expect(response.output_text).toMatch(/^You said: what time is it\ncurrent_time returned: \{"utc":/);
    const retrieved = await client.responses.retrieve(response.id);
    expect(retrieved.output).toEqual(response.output);
  });

  it("shows them in a background response once the queue has run it", async () => {
    const agent = await createAgent(clock);
    const client = agentryOpenAI();
    const conversation = `bg-tools-${crypto.randomUUID()}`;
    const held = await holdRunQueue(conversation);
    const queued = await client.responses.create({ model: agent.id, input: ASK, conversation, background: true });
    expect(queued).toMatchObject({ status: "queued", output: [] });
    await deliverRunMessages(held);
    expectServerToolOutput(await client.responses.retrieve(queued.id));
  });

  it("streams each call as its output items, and response.completed holds the same output as a retrieve", async () => {
    const agent = await createAgent(clock);
    const client = agentryOpenAI();
    const events: ResponseStreamEvent[] = [];
    for await (const event of await client.responses.create({ model: agent.id, input: ASK, stream: true })) events.push(event);
    const items = events.flatMap((e) => (e.type === "response.output_item.done" ? [e.item.type] : []));
    // The "\n\n" the model writes before its tool call is no message, in the stream as in the output.
    expect(items).toEqual(["function_call", "function_call_output", "message"]);
    const args = events.flatMap((e) => (e.type === "response.function_call_arguments.done" ? [e.arguments] : []));
    expect(args).toEqual(["{}"]);
    const completed = events.at(-1);
    if (completed?.type !== "response.completed") throw new Error("expected response.completed last");
    expectServerToolOutput(completed.response);
    const doneItems = events.flatMap((e) => (e.type === "response.output_item.done" ? [e.item] : []));
    // The stream's items are the response's output, item for item (the same ids and output_index).
    expect(doneItems).toEqual(completed.response.output);
    expect((await client.responses.retrieve(completed.response.id)).output).toEqual(completed.response.output);
  });

  it("keeps a client function call apart: a response with a server call and a client call ends with the client's call alone unanswered", async () => {
    const agent = await createAgent(clock);
    const client = agentryOpenAI();
    const weather = { type: "function" as const, name: "get_weather", parameters: { type: "object", properties: {} }, strict: false };
    const asked = await client.responses.create({
      model: agent.id,
      input: "[[tool current_time {}]] [[tool get_weather {}]] both",
      tools: [weather],
    });
    expect(asked.output.map((item) => [item.type, "name" in item ? item.name : null])).toEqual([
      ["function_call", "current_time"],
      ["function_call_output", null],
      ["function_call", "get_weather"],
    ]);
    const call = asked.output[2];
    if (call?.type !== "function_call") throw new Error("expected the client call last");
    const answered = await client.responses.create({
      model: agent.id,
      previous_response_id: asked.id,
      input: [{ type: "function_call_output", call_id: call.call_id, output: "rain" }],
      tools: [weather],
    });
    // The continued stretch's own output: its answer (the calls were the paused stretch's).
    expect(answered.output.map((item) => item.type)).toEqual(["message"]);
    expect(answered.output_text).toContain("get_weather returned: rain");
  });
});
