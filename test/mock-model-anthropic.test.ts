import {
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  ContentTooLargeError,
  InternalServerError,
  NotFoundError,
  OverloadedError,
  PaymentRequiredError,
  PermissionDeniedError,
  RateLimitError,
} from "@anthropic-ai/sdk";
import type { ContentBlock, MessageParam, RawMessageStreamEvent, Tool } from "@anthropic-ai/sdk/resources/messages";
import { describe, expect, it } from "vitest";
import { handleMockModel } from "../src/mock-model/index";
import { anthropicClient } from "./support/mock-clients";

const client = anthropicClient;

const ask = (content: string): MessageParam[] => [{ role: "user", content }];
const base = { model: "mock-1", max_tokens: 1024 } as const;
/** Tools to define, as the API requires whenever the messages hold tool_use / tool_result blocks. */
const toolsNamed = (...names: string[]): Tool[] => names.map((name) => ({ name, input_schema: { type: "object" } }));
/** An answer's blocks as a client sends them back: without the whitespace-only text the API refuses. */
const sendable = (content: ContentBlock[]) => content.filter((block) => block.type !== "text" || block.text.trim() !== "");

async function collect(stream: AsyncIterable<RawMessageStreamEvent>): Promise<RawMessageStreamEvent[]> {
  const events: RawMessageStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the call to fail");
}

describe("offline model: Anthropic Messages", () => {
  it("echoes the text outside directives (JSON)", async () => {
    const { anthropic } = client();
    const message = await anthropic.messages.create({ ...base, messages: ask("hello  there [[slow 1]]") });
    expect(message.id).toMatch(/^msg_/);
    expect(message.role).toBe("assistant");
    expect(message.stop_reason).toBe("end_turn");
    expect(message.content).toEqual([{ type: "text", text: "You said: hello there", citations: null }]);
  });

  it("streams the echo word by word with the real event sequence", async () => {
    const { anthropic } = client();
    const events = await collect(await anthropic.messages.create({ ...base, stream: true, messages: ask("one two three") }));
    expect(events.map((event) => event.type)).toEqual([
      "message_start",
      "content_block_start",
      ...Array<string>(5).fill("content_block_delta"),
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    const words = events.flatMap((e) => (e.type === "content_block_delta" && e.delta.type === "text_delta" ? [e.delta.text] : []));
    expect(words).toEqual(["You ", "said: ", "one ", "two ", "three"]);
    const last = events.at(-2);
    expect(last?.type === "message_delta" && last.delta.stop_reason).toBe("end_turn");

    const stream = anthropic.messages.stream({ ...base, messages: ask("one two three") });
    const texts: string[] = [];
    stream.on("text", (text) => texts.push(text));
    expect(await stream.finalText()).toBe("You said: one two three");
    expect(texts).toHaveLength(5);
  });

  it("uses the last user text message, not earlier ones", async () => {
    const { anthropic } = client();
    const messages: MessageParam[] = [
      { role: "user", content: "[[quota]] first" },
      { role: "assistant", content: "ok" },
      { role: "user", content: [{ type: "text", text: "second" }] },
    ];
    const message = await anthropic.messages.create({ ...base, messages });
    expect(message.content[0]?.type === "text" && message.content[0].text).toBe("You said: second");
  });

  it("calls a tool, then reports its result after the echo", async () => {
    const { anthropic } = client();
    const messages = ask('weather? [[tool get_weather {"city":"Paris"}]]');
    const tools = toolsNamed("get_weather");
    const first = await anthropic.messages.stream({ ...base, tools, messages }).finalMessage();
    expect(first.stop_reason).toBe("tool_use");
    // Like Claude, a "\n\n" text block before the call.
    expect(first.content[0]).toEqual({ type: "text", text: "\n\n", citations: null });
    const call = first.content[1];
    if (call?.type !== "tool_use") throw new Error("expected a tool_use block");
    expect(call.id).toMatch(/^toolu_[a-zA-Z0-9_-]+$/);
    expect(call.name).toBe("get_weather");
    expect(call.input).toEqual({ city: "Paris" });

    messages.push(
      { role: "assistant", content: sendable(first.content) },
      { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "sunny, 21°C" }] },
    );
    const final = await anthropic.messages.create({ ...base, tools, messages });
    expect(final.stop_reason).toBe("end_turn");
    expect(final.content[0]?.type === "text" && final.content[0].text).toBe("You said: weather?\nget_weather returned: sunny, 21°C");
  });

  it("calls several tools one per answer, in order", async () => {
    const { anthropic } = client();
    const messages = ask('[[tool a {"n":1}]] [[tool b {"n":2}]]');
    const names: string[] = [];
    const tools = toolsNamed("a", "b");
    for (const result of ["A1", "B2"]) {
      const answer = await anthropic.messages.create({ ...base, tools, messages });
      expect(answer.content).toHaveLength(2);
      const call = answer.content[1];
      if (call?.type !== "tool_use") throw new Error("expected a tool_use block");
      names.push(call.name);
      messages.push(
        { role: "assistant", content: sendable(answer.content) },
        { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: [{ type: "text", text: result }] }] },
      );
    }
    expect(names).toEqual(["a", "b"]);
    const final = await anthropic.messages.create({ ...base, tools, messages });
    expect(final.content[0]?.type === "text" && final.content[0].text).toBe("a returned: A1\nb returned: B2");
  });

  it("asks for every tool in one answer with [[parallel]]", async () => {
    const { anthropic } = client();
    const messages = ask('go [[tool a {"x":1}]] [[tool b {}]] [[parallel]]');
    const tools = toolsNamed("a", "b");
    const answer = await anthropic.messages.stream({ ...base, tools, messages }).finalMessage();
    const calls = answer.content.flatMap((block) => (block.type === "tool_use" ? [block] : []));
    expect(calls.map((c) => [c.name, c.input])).toEqual([
      ["a", { x: 1 }],
      ["b", {}],
    ]);
    expect(new Set(calls.map((c) => c.id)).size).toBe(2);
    // Results sent back in the other order still come out in directive order.
    const results = calls.reverse().map((c) => ({ type: "tool_result" as const, tool_use_id: c.id, content: `r-${c.name}` }));
    messages.push({ role: "assistant", content: sendable(answer.content) }, { role: "user", content: results });
    const final = await anthropic.messages.create({ ...base, tools, messages });
    expect(final.content[0]?.type === "text" && final.content[0].text).toBe("You said: go\na returned: r-a\nb returned: r-b");
  });

  it("fails attempts 1..N with the real overloaded error, then answers", async () => {
    const messages = ask("hi [[fail 529 x2]]");
    for (const attempt of [1, 2]) {
      const error = await rejection(client(attempt).anthropic.messages.create({ ...base, messages }));
      expect(error).toBeInstanceOf(OverloadedError);
      if (!(error instanceof OverloadedError)) return;
      expect(error.status).toBe(529);
      expect(error.error).toMatchObject({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } });
      expect(error.type).toBe("overloaded_error");
      expect(error.headers.get("retry-after")).toBeNull();
      expect(error.requestID).toMatch(/^req_/);
    }
    const ok = await client(3).anthropic.messages.create({ ...base, messages });
    expect(ok.content[0]?.type === "text" && ok.content[0].text).toBe("You said: hi");
  });

  it("sends retry-after only when asked, also on a streamed call", async () => {
    const { anthropic } = client(1);
    const error = await rejection(anthropic.messages.stream({ ...base, messages: ask("[[fail 429 x1 retry-after=2]]") }).finalMessage());
    expect(error).toBeInstanceOf(RateLimitError);
    if (!(error instanceof RateLimitError)) return;
    expect(error.type).toBe("rate_limit_error");
    expect(error.headers.get("retry-after")).toBe("2");
  });

  it("maps each failing status to its real error type and SDK class", async () => {
    const cases = [
      [400, BadRequestError, "invalid_request_error"],
      [401, AuthenticationError, "authentication_error"],
      [402, PaymentRequiredError, "billing_error"],
      [403, PermissionDeniedError, "permission_error"],
      [404, NotFoundError, "not_found_error"],
      [413, ContentTooLargeError, "request_too_large"],
      [500, InternalServerError, "api_error"],
    ] as const;
    for (const [status, errorClass, type] of cases) {
      const error = await rejection(client().anthropic.messages.create({ ...base, messages: ask(`[[fail ${status} x1]]`) }));
      expect(error).toBeInstanceOf(errorClass);
      expect(error instanceof errorClass && [error.status, error.type]).toEqual([status, type]);
    }
  });

  it("answers the permanent credit error for [[quota]] on every attempt", async () => {
    for (const attempt of [1, 5]) {
      const error = await rejection(client(attempt).anthropic.messages.create({ ...base, messages: ask("[[quota]]") }));
      expect(error).toBeInstanceOf(BadRequestError);
      expect(error instanceof BadRequestError && error.apiMessage).toBe(
        "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.",
      );
    }
  });

  it("answers the context-window error for [[context_overflow]]", async () => {
    const error = await rejection(client().anthropic.messages.create({ ...base, messages: ask("[[context_overflow]]") }));
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error instanceof BadRequestError && [error.type, error.apiMessage]).toEqual([
      "invalid_request_error",
      "prompt is too long: 250000 tokens > 200000 maximum",
    ]);
  });

  it("cuts the first attempt's stream mid-answer, then streams in full", async () => {
    const messages = ask("alpha beta gamma delta [[cut]]");
    const { anthropic } = client(1);
    const events = await collect(await anthropic.messages.create({ ...base, stream: true, messages }));
    const types = events.map((event) => event.type);
    expect(types).toContain("content_block_delta");
    expect(types).not.toContain("message_delta");
    expect(types).not.toContain("message_stop");
    const cut = anthropic.messages.stream({ ...base, messages });
    await expect(cut.finalMessage()).rejects.toThrow("stream ended without producing a Message");

    const full = await client(2)
      .anthropic.messages.stream({ ...base, messages })
      .finalText();
    expect(full).toBe("You said: alpha beta gamma delta");
  });

  it("truncates the first attempt's JSON body under [[cut]]", async () => {
    const messages = ask("hi [[cut]]");
    await expect(client(1).anthropic.messages.create({ ...base, messages })).rejects.toThrow(SyntaxError);
    const ok = await client(2).anthropic.messages.create({ ...base, messages });
    expect(ok.content[0]?.type === "text" && ok.content[0].text).toBe("You said: hi");
  });

  it("waits under [[slow]] and stops promptly when aborted", async () => {
    const { anthropic } = client();
    const started = Date.now();
    const slowText = await anthropic.messages.stream({ ...base, messages: ask("a b [[slow 200]]") }).finalText();
    expect(slowText).toBe("You said: a b");
    expect(Date.now() - started).toBeGreaterThanOrEqual(200 + 3 * 20 - 5);

    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const abortStart = Date.now();
    const aborted = anthropic.messages.create({ ...base, messages: ask("[[slow 5000]] x") }, { signal: controller.signal });
    await expect(aborted).rejects.toBeInstanceOf(APIUserAbortError);
    expect(Date.now() - abortStart).toBeLessThan(2000);

    const streamController = new AbortController();
    const stream = anthropic.messages.stream(
      { ...base, messages: ask("[[slow 3000]] many words here") },
      { signal: streamController.signal },
    );
    setTimeout(() => streamController.abort(), 50);
    const streamStart = Date.now();
    await expect(stream.finalMessage()).rejects.toBeInstanceOf(APIUserAbortError);
    expect(Date.now() - streamStart).toBeLessThan(2000);
  });

  it("answers N words for [[words N]]", async () => {
    const text = await client()
      .anthropic.messages.stream({ ...base, messages: ask("[[words 42]]") })
      .finalText();
    expect(text.split(" ")).toHaveLength(42);
  });

  const schema = {
    type: "object",
    properties: { city: { type: "string" }, temperature: { type: "number" }, tags: { type: "array", items: { type: "string" } } },
    required: ["city", "temperature"],
    additionalProperties: false,
  };

  it("answers sample JSON for an output schema, and violating JSON for [[badjson]]", async () => {
    const { anthropic } = client();
    const output_config = { format: { type: "json_schema" as const, schema } };
    const good = await anthropic.messages.stream({ ...base, output_config, messages: ask("report") }).finalText();
    expect(JSON.parse(good)).toEqual({ city: "sample", temperature: 1, tags: ["sample"] });
    const bad = await anthropic.messages.create({ ...base, output_config, messages: ask("report [[badjson]]") });
    const badText = bad.content[0]?.type === "text" ? bad.content[0].text : "";
    expect(JSON.parse(badText)).toEqual({ tags: 12345 });
    // A repair request (last user message without [[badjson]]) gets valid JSON again.
    const repaired = await anthropic.messages.create({
      ...base,
      output_config,
      messages: [...ask("[[badjson]]"), { role: "assistant", content: badText }, ...ask("fix it")],
    });
    expect(repaired.content[0]?.type === "text" && JSON.parse(repaired.content[0].text)).toMatchObject({ city: "sample" });
  });

  it("calls the tools first and answers the schema's JSON after their results", async () => {
    const { anthropic } = client();
    const output_config = { format: { type: "json_schema" as const, schema } };
    const messages = ask("[[tool lookup]]");
    const tools = toolsNamed("lookup");
    const call = await anthropic.messages.create({ ...base, tools, output_config, messages });
    const block = call.content[1];
    if (block?.type !== "tool_use") throw new Error("expected a tool_use block");
    messages.push(
      { role: "assistant", content: sendable(call.content) },
      { role: "user", content: [{ type: "tool_result", tool_use_id: block.id, content: "found" }] },
    );
    const final = await anthropic.messages.create({ ...base, tools, output_config, messages });
    expect(final.content[0]?.type === "text" && JSON.parse(final.content[0].text)).toEqual({
      city: "sample",
      temperature: 1,
      tags: ["sample"],
    });
    const plain = await anthropic.messages.create({ ...base, messages: ask("[[json]]") });
    expect(plain.content[0]?.type === "text" && plain.content[0].text).toBe("{}");
  });

  it("reports deterministic usage, with cache reads excluded from input_tokens", async () => {
    const { anthropic, bodies } = client();
    const plain = await anthropic.messages.create({ ...base, messages: ask("hi") });
    expect(plain.usage).toMatchObject({
      input_tokens: Math.ceil((bodies[0]?.length ?? 0) / 4),
      output_tokens: Math.ceil("You said: hi".length / 4),
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
    });

    const system = [{ type: "text" as const, text: "S".repeat(400), cache_control: { type: "ephemeral" as const } }];
    const messages: MessageParam[] = [...ask("one"), { role: "assistant", content: "You said: one" }, ...ask("two")];
    const events = await collect(await anthropic.messages.create({ ...base, system, messages, stream: true }));
    const total = Math.ceil((bodies[1]?.length ?? 0) / 4);
    const start = events[0];
    expect(start?.type === "message_start" && start.message.usage).toMatchObject({
      input_tokens: total - 100,
      cache_read_input_tokens: 100,
    });
    const final = await anthropic.messages.stream({ ...base, system, messages }).finalMessage();
    expect(final.usage).toMatchObject({
      input_tokens: Math.ceil((bodies[2]?.length ?? 0) / 4) - 100,
      cache_read_input_tokens: 100,
      output_tokens: Math.ceil("You said: two".length / 4),
    });
    // No assistant turn yet: nothing is read from the cache.
    const first = await anthropic.messages.create({ ...base, system, messages: ask("one") });
    expect(first.usage.cache_read_input_tokens).toBe(0);
  });

  it("counts a tool call's name and arguments as output tokens", async () => {
    const { anthropic } = client();
    const answer = await anthropic.messages.create({ ...base, messages: ask('[[tool lookup {"q":"abc"}]]') });
    expect(answer.usage.output_tokens).toBe(Math.ceil(("lookup" + '{"q":"abc"}').length / 4));
  });

  it("answers 400 to malformed bodies, 401 without a key, 404 to unknown paths", async () => {
    const post = (path: string, body: string, headers: Record<string, string> = { "x-api-key": "k" }) =>
      handleMockModel(new Request(`http://mock.local${path}`, { method: "POST", body, headers }));
    const broken = await post("/v1/messages", "{not json");
    expect(broken.status).toBe(400);
    expect(await broken.json()).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    const missing = await post("/v1/messages", JSON.stringify({ model: "m", max_tokens: 5 }));
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error: { message: "messages: Field required" } });
    const ok = await post("/anything/v1/messages", JSON.stringify({ model: "m", max_tokens: 5, messages: ask("x") }));
    expect(ok.status).toBe(200);
    const anonymous = await post("/v1/messages", JSON.stringify({ model: "m", max_tokens: 5, messages: ask("x") }), {});
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ error: { type: "authentication_error" } });
    const unknown = await post("/v1/nope", "{}");
    expect(unknown.status).toBe(404);
  });
});
