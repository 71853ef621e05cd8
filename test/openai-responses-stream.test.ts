import type { ResponseStreamEvent } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import { createAgent } from "./support/http";
import { agentryOpenAI } from "./support/openai-sdk";

const collect = async (stream: AsyncIterable<ResponseStreamEvent>) => {
  const events: ResponseStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
};
const deltasOf = (events: ResponseStreamEvent[]) =>
  events.flatMap((e) => (e.type === "response.output_text.delta" ? [e.delta] : [])).join("");

describe("streamed responses", () => {
  it("streams the Responses event types, numbered from 0, to response.completed", async () => {
    const agent = await createAgent();
    const events = await collect(await agentryOpenAI().responses.create({ model: agent.id, input: "stream these words", stream: true }));
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const types = events.map((e) => e.type).filter((t) => t !== "response.output_text.delta");
    expect(types).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(deltasOf(events)).toBe("You said: stream these words");
    const completed = events.at(-1);
    if (completed?.type !== "response.completed") throw new Error("expected response.completed last");
    expect(completed.response).toMatchObject({
      status: "completed",
      output: [{ type: "message", content: [{ type: "output_text", text: "You said: stream these words" }] }],
    });
    expect(completed.response.usage?.output_tokens).toBeGreaterThan(0);
  });

  it("resumes a dropped stream with retrieve(stream: true, starting_after), with the same events after that point", async () => {
    const agent = await createAgent();
    const client = agentryOpenAI();
    const first: ResponseStreamEvent[] = [];
    for await (const event of await client.responses.create({ model: agent.id, input: "a dropped stream resumes", stream: true })) {
      first.push(event);
      if (first.length === 4) break;
    }
    const created = first[0];
    if (created?.type !== "response.created") throw new Error("expected response.created first");
    const resumed = await collect(await client.responses.retrieve(created.response.id, { stream: true, starting_after: 3 }));
    const whole = await collect(await client.responses.retrieve(created.response.id, { stream: true }));
    expect(resumed[0]?.sequence_number).toBe(4);
    expect([...first, ...resumed].map((e) => [e.sequence_number, e.type])).toEqual(whole.map((e) => [e.sequence_number, e.type]));
    expect(deltasOf([...first, ...resumed])).toBe("You said: a dropped stream resumes");
    expect(resumed.at(-1)?.type).toBe("response.completed");
  });
});
