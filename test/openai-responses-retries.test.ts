import type { ResponseStreamEvent } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import { createAgent } from "./support/http";
import { agentryOpenAI } from "./support/openai-sdk";

const retrying = { retries: 3, delay_between_retries: 0.05 };

/** The message items the stream ended, as [status, text]. */
const messagesOf = (events: ResponseStreamEvent[]) =>
  events.flatMap((e) =>
    e.type === "response.output_item.done" && e.item.type === "message"
      ? [[e.item.status, e.item.content.map((part) => (part.type === "output_text" ? part.text : "")).join("")]]
      : [],
  );

/** What a client keeps of the deltas: those of the items that did not end `incomplete` (voided). */
function keptText(events: ResponseStreamEvent[]): string {
  const voided = new Set(
    events.flatMap((e) =>
      e.type === "response.output_item.done" && e.item.type === "message" && e.item.status === "incomplete" ? [e.item.id] : [],
    ),
  );
  return events.flatMap((e) => (e.type === "response.output_text.delta" && !voided.has(e.item_id) ? [e.delta] : [])).join("");
}

describe("a retried model call in a streamed response", () => {
  it("ends the voided attempt's message incomplete, then streams the answer again: the client ends with the right text", async () => {
    const agent = await createAgent(retrying);
    const client = agentryOpenAI();
    const events: ResponseStreamEvent[] = [];
    for await (const event of await client.responses.create({ model: agent.id, input: "[[cut]] cut me off", stream: true }))
      events.push(event);
    const messages = messagesOf(events);
    expect(messages.map(([status]) => status)).toEqual(["incomplete", "completed"]);
    expect(messages[1]).toEqual(["completed", "You said: cut me off"]);
    expect("You said: cut me off".startsWith(String(messages[0]?.[1]))).toBe(true);
    expect(keptText(events)).toBe("You said: cut me off");
    expect(events.at(-1)).toMatchObject({
      type: "response.completed",
      response: { status: "completed", output: [{ type: "message", status: "completed", content: [{ text: "You said: cut me off" }] }] },
    });
  });

  it("gives the SDK's stream helper the right final response after a voided attempt", async () => {
    const agent = await createAgent(retrying);
    const stream = agentryOpenAI().responses.stream({ model: agent.id, input: "[[cut]] once more" });
    const final = await stream.finalResponse();
    expect(final).toMatchObject({ status: "completed", output_text: "You said: once more" });
  });

  it("streams nothing void when the provider fails before its first token", async () => {
    const agent = await createAgent(retrying);
    const events: ResponseStreamEvent[] = [];
    for await (const event of await agentryOpenAI().responses.create({ model: agent.id, input: "[[fail 500 x1]] try again", stream: true }))
      events.push(event);
    expect(messagesOf(events)).toEqual([["completed", "You said: try again"]]);
    expect(events.at(-1)?.type).toBe("response.completed");
  });
});
