/**
 * The Open Responses compliance suite's HTTP cases (openresponses.org, "Compliance"), as our own
 * test: each case sends the suite's request to `POST /v1/responses` over raw HTTP, as the suite
 * does (no SDK), checks every Response object and every streamed event against the spec's
 * schemas (test/support/open-responses-schema.ts), then the case's own assertions.
 *
 * Adaptations to the offline model (docs/offline-model.md): `model` is the agent's id, and a
 * case that needs a tool call carries a `[[tool NAME {json}]]` directive in its user text (a
 * real model would choose the call itself). The prompts are otherwise the suite's.
 *
 * Beyond the suite's own checks, the stream is held to the spec's prose on streaming: the
 * `event:` field equals the data's `type`, sequence numbers increase, the stream opens with
 * `response.created`, closes with a terminal response event and then the literal `[DONE]`, and
 * an item's events come in the order added → parts → deltas → done.
 */
import { describe, expect, it } from "vitest";
import { api, createAgent } from "./support/http";
import { TINY_PNG, toBase64 } from "./support/media";
import { expectValidResponse, expectValidStreamEvents } from "./support/open-responses-schema";

type Part = { type: string; text?: string };
type Item = { type: string; id?: string; call_id?: string; name?: string; arguments?: string; status?: string; content?: Part[] };
type ResponseObject = { id: string; status: string; output: Item[]; previous_response_id?: unknown };
type StreamEvent = {
  type: string;
  sequence_number: number;
  response?: ResponseObject;
  item?: Item | null;
  item_id?: string;
  output_index?: number;
  content_index?: number;
  delta?: string;
  text?: string;
  arguments?: string;
};
type Frame = { event: string | null; data: string };

const TERMINAL = ["response.completed", "response.failed", "response.incomplete"];

const weatherTool = {
  type: "function",
  name: "get_weather",
  description: "Get the current weather for a location",
  parameters: {
    type: "object",
    properties: { location: { type: "string", description: "The city and state, e.g. San Francisco, CA" } },
    required: ["location"],
  },
};
const CALL_WEATHER = '[[tool get_weather {"location":"San Francisco, CA"}]]';

/** A one-page PDF whose only text is its title line. */
function tinyPdf(title: string): string {
  const stream = `BT /F1 14 Tf 24 60 Td (${title}) Tj ET`;
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 320 120] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Courier >>",
  ];
  let pdf = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(pdf.length);
    pdf += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = pdf.length;
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")}`;
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return toBase64(new TextEncoder().encode(pdf));
}

const message = (role: string, content: unknown) => ({ type: "message", role, content });
const outputText = (response: ResponseObject) =>
  response.output
    .filter((item) => item.type === "message")
    .flatMap((item) => item.content ?? [])
    .map((part) => part.text ?? "")
    .join("");

/** The suite's `hasOutput` and `completedStatus` validators. */
function expectCompletedWithOutput(response: ResponseObject, label: string): void {
  expect.soft(response.output?.length ?? 0, `${label}: Response has no output items`).toBeGreaterThan(0);
  expect.soft(response.status, `${label}: expected status "completed"`).toBe("completed");
}

/** POST /v1/responses, blocking: a 200 `application/json` Response object, checked against the schema (softly: the case's own checks still run). */
async function create(body: Record<string, unknown>, label: string): Promise<ResponseObject> {
  const response = await api("/v1/responses", { body });
  const text = await response.text();
  expect(response.status, `${label}: HTTP ${response.status}: ${text}`).toBe(200);
  expect.soft(response.headers.get("content-type") ?? "", `${label}: content-type`).toMatch(/^application\/json\b/);
  const json = JSON.parse(text) as ResponseObject;
  expectValidResponse(json, { label, soft: true });
  return json;
}

/** SSE frames: blank-line separated; `event:` and `data:` fields (data lines joined by "\n"); comments skipped. */
function parseSse(text: string): Frame[] {
  const frames: Frame[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    let event: string | null = null;
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line === "" || line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "event") event = value;
      else if (field === "data") data.push(value);
    }
    if (event !== null || data.length > 0) frames.push({ event, data: data.join("\n") });
  }
  return frames;
}

/**
 * POST /v1/responses with `stream: true`: a 200 `text/event-stream` whose every event matches
 * its schema and whose framing follows the spec. Returns the events and the final response.
 */
async function createStreamed(body: Record<string, unknown>, label: string): Promise<{ events: StreamEvent[]; final: ResponseObject }> {
  const response = await api("/v1/responses", { body: { ...body, stream: true } });
  const text = await response.text();
  expect(response.status, `${label}: HTTP ${response.status}: ${text.slice(0, 2000)}`).toBe(200);
  expect.soft(response.headers.get("content-type") ?? "", `${label}: content-type`).toMatch(/^text\/event-stream\b/);

  const frames = parseSse(text);
  expect(frames.length, `${label}: no streaming events received`).toBeGreaterThan(0);
  const eventFrames = frames.filter((frame) => frame.data !== "[DONE]");
  const unparsable = eventFrames.filter((frame) => {
    try {
      JSON.parse(frame.data);
      return false;
    } catch {
      return true;
    }
  });
  expect(
    unparsable.map((f) => f.data),
    `${label}: data that is neither JSON nor [DONE]`,
  ).toEqual([]);
  const events = eventFrames.map((frame) => JSON.parse(frame.data) as StreamEvent);

  expectValidStreamEvents(events, { label, soft: true });
  const mismatched = eventFrames.flatMap((frame, i) =>
    frame.event === events[i]?.type ? [] : [`event: ${frame.event} / type: ${events[i]?.type}`],
  );
  expect.soft(mismatched, `${label}: the event field MUST match the type in the event body`).toEqual([]);
  const seqs = events.map((e) => e.sequence_number);
  expect
    .soft(
      seqs.every((seq, i) => i === 0 || seq > (seqs[i - 1] as number)),
      `${label}: sequence_number increases (${seqs.join(",")})`,
    )
    .toBe(true);
  expect.soft(events[0]?.type, `${label}: first event`).toBe("response.created");
  expect.soft(TERMINAL, `${label}: last event ${events.at(-1)?.type} is a terminal response event`).toContain(events.at(-1)?.type);
  expect.soft(frames.at(-1)?.data.slice(0, 80), `${label}: the terminal event MUST be the literal string [DONE]`).toBe("[DONE]");
  expect.soft(frames.slice(0, -1).filter((f) => f.data === "[DONE]").length, `${label}: [DONE] before the end`).toBe(0);

  const final = [...events].reverse().find((e) => TERMINAL.includes(e.type))?.response;
  if (!final) throw new Error(`${label}: no response.completed / .failed / .incomplete event`);
  return { events, final };
}

/**
 * The spec's order for a streamed message item: `output_item.added` (status `in_progress`),
 * `content_part.added`, the `output_text.delta`s, `output_text.done` (their concatenation),
 * `content_part.done`, `output_item.done`; all naming the item and its `output_index`.
 */
function expectMessageLifecycle(events: StreamEvent[], label: string): string {
  const added = events.filter((e) => e.type === "response.output_item.added" && e.item?.type === "message");
  expect(added.length, `${label}: a message item was added`).toBeGreaterThan(0);
  let text = "";
  for (const start of added) {
    const id = start.item?.id;
    const own = events.filter((e) => (e.item_id !== undefined ? e.item_id === id : e.item?.id === id));
    const order = own.map((e) => e.type).filter((t, i, all) => t !== "response.output_text.delta" || all[i - 1] !== t);
    expect
      .soft(order, `${label}: events of message ${id}`)
      .toEqual([
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
      ]);
    expect.soft(start.item?.status, `${label}: output_item.added item status`).toBe("in_progress");
    expect.soft(new Set(own.map((e) => e.output_index)), `${label}: output_index of message ${id}`).toEqual(new Set([start.output_index]));
    const deltas = own.flatMap((e) => (e.type === "response.output_text.delta" ? [e.delta] : [])).join("");
    const done = own.find((e) => e.type === "response.output_text.done");
    expect.soft(done?.text, `${label}: output_text.done text = the deltas`).toBe(deltas);
    text += deltas;
  }
  return text;
}

describe("Open Responses compliance (the suite's HTTP cases)", () => {
  it("basic-response: a user message answers a completed ResponseResource with output", async () => {
    const agent = await createAgent();
    const response = await create({ model: agent.id, input: [message("user", "Say hello in exactly 3 words.")] }, "basic-response");
    expectCompletedWithOutput(response, "basic-response");
    expect(outputText(response)).toBe("You said: Say hello in exactly 3 words.");
  });

  it("streaming-response: SSE events that each match their schema, ending with a completed response", async () => {
    const agent = await createAgent();
    const { events, final } = await createStreamed(
      { model: agent.id, input: [message("user", "Count from 1 to 5.")] },
      "streaming-response",
    );
    expect.soft(events.at(-1)?.type).toBe("response.completed");
    expect.soft(final.status, "streaming-response: final status").toBe("completed");
    expect(expectMessageLifecycle(events, "streaming-response")).toBe("You said: Count from 1 to 5.");
    expect(outputText(final)).toBe("You said: Count from 1 to 5.");
  });

  it("system-prompt: a system message before the user message", async () => {
    const agent = await createAgent();
    const response = await create(
      {
        model: agent.id,
        input: [message("system", "You are a pirate. Always respond in pirate speak."), message("user", "Say hello.")],
      },
      "system-prompt",
    );
    expectCompletedWithOutput(response, "system-prompt");
    expect(outputText(response)).toBe("You said: Say hello.");
  });

  it("tool-calling: a function tool, answered with a function_call item", async () => {
    const agent = await createAgent();
    const response = await create(
      { model: agent.id, input: [message("user", `What's the weather like in San Francisco? ${CALL_WEATHER}`)], tools: [weatherTool] },
      "tool-calling",
    );
    expect.soft(response.output?.length ?? 0, "tool-calling: Response has no output items").toBeGreaterThan(0);
    const call = response.output.find((item) => item.type === "function_call");
    expect(call, 'tool-calling: expected an output item of type "function_call"').toBeDefined();
    expect(call).toMatchObject({ name: "get_weather", call_id: expect.any(String) });
    expect(JSON.parse(call?.arguments ?? "null")).toEqual({ location: "San Francisco, CA" });
  });

  it("tool-calling-streaming: function_call SSE events, arguments delta and done", async () => {
    const agent = await createAgent();
    const { events, final } = await createStreamed(
      { model: agent.id, input: [message("user", `What's the weather like in San Francisco? ${CALL_WEATHER}`)], tools: [weatherTool] },
      "tool-calling-streaming",
    );
    const added = events.find((e) => e.type === "response.output_item.added" && e.item?.type === "function_call");
    expect.soft(added, "Missing response.output_item.added event with function_call item").toBeDefined();
    const deltas = events.filter((e) => e.type === "response.function_call_arguments.delta");
    expect.soft(deltas.length, "Missing response.function_call_arguments.delta event").toBeGreaterThan(0);
    const argsDone = events.find((e) => e.type === "response.function_call_arguments.done");
    expect.soft(argsDone, "Missing response.function_call_arguments.done event").toBeDefined();
    const itemDone = events.find((e) => e.type === "response.output_item.done" && e.item?.type === "function_call");
    expect.soft(itemDone, "Missing response.output_item.done event with function_call item").toBeDefined();

    expect.soft(added?.item).toMatchObject({ name: "get_weather", status: "in_progress" });
    expect.soft(deltas.every((e) => e.item_id === added?.item?.id && e.output_index === added?.output_index)).toBe(true);
    expect.soft(argsDone?.arguments, "arguments.done = the deltas").toBe(deltas.map((e) => e.delta).join(""));
    expect.soft(itemDone?.item?.arguments, "output_item.done arguments = arguments.done").toBe(argsDone?.arguments);
    expect(JSON.parse(argsDone?.arguments ?? "null")).toEqual({ location: "San Francisco, CA" });
    expect(final.output.find((item) => item.type === "function_call")).toMatchObject({
      name: "get_weather",
      call_id: itemDone?.item?.call_id,
    });
  });

  it("function-call-roundtrip: a forced function_call, then its function_call_output with previous_response_id", async () => {
    const agent = await createAgent();
    const first = await create(
      {
        model: agent.id,
        input: `Use the weather tool to get the temperature in San Francisco. ${CALL_WEATHER}`,
        tools: [weatherTool],
        tool_choice: { type: "function", name: "get_weather" },
      },
      "function-call-roundtrip (call)",
    );
    const call = first.output.find((item) => item.type === "function_call");
    expect(call?.call_id, "First response did not include a function_call with call_id").toEqual(expect.any(String));

    const second = await create(
      {
        model: agent.id,
        previous_response_id: first.id,
        input: [{ type: "function_call_output", call_id: call?.call_id, output: "64 degrees and clear" }],
      },
      "function-call-roundtrip (output)",
    );
    expectCompletedWithOutput(second, "function-call-roundtrip (output)");
    expect(outputText(second)).toContain("get_weather returned: 64 degrees and clear");
  });

  it("image-input: an input_image data URL next to input_text", async () => {
    const agent = await createAgent();
    const response = await create(
      {
        model: agent.id,
        input: [
          message("user", [
            { type: "input_text", text: "What do you see in this image? Answer in one sentence." },
            { type: "input_image", image_url: `data:image/png;base64,${TINY_PNG}` },
          ]),
        ],
      },
      "image-input",
    );
    expectCompletedWithOutput(response, "image-input");
    expect(outputText(response)).toContain("What do you see in this image?");
  });

  it("file-input: a base64 input_file (a small PDF) next to input_text", async () => {
    const agent = await createAgent();
    const response = await create(
      {
        model: agent.id,
        input: [
          message("user", [
            { type: "input_text", text: "Read the attached file and answer with its title only." },
            {
              type: "input_file",
              filename: "compliance-fixture.pdf",
              file_data: `data:application/pdf;base64,${tinyPdf("Title: Compliance Fixture")}`,
            },
          ]),
        ],
      },
      "file-input",
    );
    expectCompletedWithOutput(response, "file-input");
    expect(outputText(response)).toContain("Read the attached file");
  });

  it("multi-turn: user, assistant and user messages as the conversation's history", async () => {
    const agent = await createAgent();
    const response = await create(
      {
        model: agent.id,
        input: [
          message("user", "My name is Alice."),
          message("assistant", "Hello Alice! Nice to meet you. How can I help you today?"),
          message("user", "What is my name?"),
        ],
      },
      "multi-turn",
    );
    expectCompletedWithOutput(response, "multi-turn");
    expect(outputText(response)).toBe("You said: What is my name?");
  });

  it("previous-response-id: a second response chained to the first", async () => {
    const agent = await createAgent();
    const first = await create(
      { model: agent.id, input: "Remember this code word: papaya. Reply with only OK." },
      "previous-response-id (first)",
    );
    expectCompletedWithOutput(first, "previous-response-id (first)");
    const second = await create(
      { model: agent.id, previous_response_id: first.id, input: "What code word did I ask you to remember?" },
      "previous-response-id (second)",
    );
    expectCompletedWithOutput(second, "previous-response-id (second)");
    expect(outputText(second)).toBe("You said: What code word did I ask you to remember?");
    // The field's definition: "The ID of the previous response in the chain that was referenced, if any."
    expect.soft(second.previous_response_id, "previous-response-id: the second response names the first").toBe(first.id);
    expect(second.id).not.toBe(first.id);
  });
});
