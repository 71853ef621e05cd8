import {
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
} from "openai";
import type { ResponseInputItem, ResponseStreamEvent } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import { handleMockModel } from "../src/mock-model/index";
import { openaiClient } from "./support/mock-clients";

const client = openaiClient;

const ask = (text: string): ResponseInputItem[] => [{ role: "user", content: text }];
const model = "mock-1";

async function collect(stream: AsyncIterable<ResponseStreamEvent>): Promise<ResponseStreamEvent[]> {
  const events: ResponseStreamEvent[] = [];
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

describe("offline model: OpenAI Responses", () => {
  it("echoes the text outside directives (JSON)", async () => {
    const response = await client().openai.responses.create({ model, input: "hello [[slow 1]] world" });
    expect(response.id).toMatch(/^resp_/);
    expect(response.status).toBe("completed");
    expect(response.output_text).toBe("You said: hello world");
    expect(response.output[0]).toMatchObject({ type: "message", role: "assistant", status: "completed" });
  });

  it("streams the echo word by word with consistent ids and sequence numbers", async () => {
    const { openai } = client();
    const events = await collect(await openai.responses.create({ model, input: ask("one two"), stream: true }));
    expect(events.map((e) => e.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const deltas = events.flatMap((e) => (e.type === "response.output_text.delta" ? [e.delta] : []));
    expect(deltas).toEqual(["You ", "said: ", "one ", "two"]);

    const stream = openai.responses.stream({ model, input: ask("one two") });
    const seen: string[] = [];
    stream.on("response.output_text.delta", (event) => seen.push(event.delta));
    const final = await stream.finalResponse();
    expect(final.output_text).toBe("You said: one two");
    expect(final.status).toBe("completed");
    expect(seen).toHaveLength(4);
  });

  it("calls a tool (fc_ item, call_ id), then reports its result", async () => {
    const { openai } = client();
    const input = ask('weather? [[tool get_weather {"city":"Paris"}]]');
    const first = await openai.responses.stream({ model, input }).finalResponse();
    const call = first.output[0];
    if (call?.type !== "function_call") throw new Error("expected a function_call item");
    expect(call.id).toMatch(/^fc_/);
    expect(call.call_id).toMatch(/^call_/);
    expect([call.name, JSON.parse(call.arguments)]).toEqual(["get_weather", { city: "Paris" }]);

    input.push(call, { type: "function_call_output", call_id: call.call_id, output: "sunny" });
    const final = await openai.responses.create({ model, input });
    expect(final.output_text).toBe("You said: weather?\nget_weather returned: sunny");
  });

  it("calls several tools one per answer, or all at once with [[parallel]]", async () => {
    const { openai } = client();
    const input = ask("[[tool a]] [[tool b]]");
    const one = await openai.responses.create({ model, input });
    expect(one.output.map((item) => item.type === "function_call" && item.name)).toEqual(["a"]);
    const a = one.output[0];
    if (a?.type !== "function_call") throw new Error("expected a function_call item");
    input.push(a, { type: "function_call_output", call_id: a.call_id, output: "A" });
    const two = await openai.responses.create({ model, input });
    expect(two.output.map((item) => item.type === "function_call" && item.name)).toEqual(["b"]);

    const parallelInput = ask("[[tool a]] [[tool b]] [[parallel]]");
    const both = await openai.responses.stream({ model, input: parallelInput }).finalResponse();
    const calls = both.output.flatMap((item) => (item.type === "function_call" ? [item] : []));
    expect(calls.map((c) => c.name)).toEqual(["a", "b"]);
    parallelInput.push(
      ...calls,
      ...calls.map((c) => ({ type: "function_call_output" as const, call_id: c.call_id, output: c.name.toUpperCase() })),
    );
    const final = await openai.responses.create({ model, input: parallelInput });
    expect(final.output_text).toBe("a returned: A\nb returned: B");
  });

  it("refuses sampling on a reasoning model and reasoning on another as unsupported parameters", async () => {
    const sampling = await rejection(client().openai.responses.create({ model: "o3", input: ask("hi"), temperature: 0.5 }));
    expect(sampling).toMatchObject({ status: 400, param: "temperature", code: "unsupported_parameter" });
    const reasoning = await rejection(
      client().openai.responses.create({ model: "gpt-4.1", input: ask("hi"), reasoning: { effort: "low" } }),
    );
    expect(reasoning).toMatchObject({ status: 400, param: "reasoning.effort", code: "unsupported_parameter" });
    expect((await client().openai.responses.create({ model: "o3", input: ask("hi"), reasoning: { effort: "low" } })).output_text).toBe(
      "You said: hi",
    );
  });

  it("fails attempts 1..N with the real error body, then answers", async () => {
    const input = ask("hi [[fail 429 x1 retry-after=1]]");
    const error = await rejection(client(1).openai.responses.create({ model, input }));
    expect(error).toBeInstanceOf(RateLimitError);
    if (!(error instanceof RateLimitError)) return;
    expect([error.status, error.code, error.param]).toEqual([429, "rate_limit_exceeded", null]);
    expect(error.headers.get("retry-after")).toBe("1");
    const ok = await client(2).openai.responses.create({ model, input });
    expect(ok.output_text).toBe("You said: hi");

    const overloaded = await rejection(
      client(1)
        .openai.responses.stream({ model, input: ask("[[fail 529 x3]]") })
        .finalResponse(),
    );
    expect(overloaded).toBeInstanceOf(InternalServerError);
    expect(overloaded instanceof InternalServerError && [overloaded.status, overloaded.headers.get("retry-after")]).toEqual([529, null]);
  });

  it("maps each failing status to its SDK class and real type/code", async () => {
    const cases = [
      [400, BadRequestError, "invalid_request_error", null],
      [401, AuthenticationError, "invalid_request_error", "invalid_api_key"],
      [403, PermissionDeniedError, "request_forbidden", "unsupported_country_region_territory"],
      [404, NotFoundError, "invalid_request_error", "model_not_found"],
      [500, InternalServerError, "server_error", "server_error"],
    ] as const;
    for (const [status, errorClass, type, code] of cases) {
      const error = await rejection(client().openai.responses.create({ model, input: ask(`[[fail ${status} x1]]`) }));
      expect(error).toBeInstanceOf(errorClass);
      expect(error instanceof errorClass && [error.status, error.type, error.code]).toEqual([status, type, code]);
    }
  });

  it("answers insufficient_quota (429) for [[quota]] and context_length_exceeded for [[context_overflow]]", async () => {
    const quota = await rejection(client(4).openai.responses.create({ model, input: ask("[[quota]]") }));
    expect(quota).toBeInstanceOf(RateLimitError);
    expect(quota instanceof RateLimitError && [quota.type, quota.code, quota.message]).toEqual([
      "insufficient_quota",
      "insufficient_quota",
      "429 You exceeded your current quota, please check your plan and billing details.",
    ]);
    const overflow = await rejection(client().openai.responses.create({ model, input: ask("[[context_overflow]]") }));
    expect(overflow).toBeInstanceOf(BadRequestError);
    expect(overflow instanceof BadRequestError && [overflow.status, overflow.code, overflow.param]).toEqual([
      400,
      "context_length_exceeded",
      "input",
    ]);
  });

  it("cuts the first attempt's stream before response.completed, then streams in full", async () => {
    const input = ask("alpha beta gamma [[cut]]");
    const events = await collect(await client(1).openai.responses.create({ model, input, stream: true }));
    const types = events.map((e) => e.type);
    expect(types).toContain("response.output_text.delta");
    expect(types).not.toContain("response.output_text.done");
    expect(types).not.toContain("response.completed");
    const partial = await client(1).openai.responses.stream({ model, input }).finalResponse();
    expect(partial.status).toBe("in_progress");
    expect("You said: alpha beta gamma".startsWith(partial.output_text)).toBe(true);
    expect(partial.output_text.length).toBeLessThan("You said: alpha beta gamma".length);

    const full = await client(2).openai.responses.stream({ model, input }).finalResponse();
    expect([full.status, full.output_text]).toEqual(["completed", "You said: alpha beta gamma"]);
    await expect(client(1).openai.responses.create({ model, input })).rejects.toThrow(SyntaxError);
  });

  it("waits under [[slow]] and stops promptly when aborted", async () => {
    const { openai } = client();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const started = Date.now();
    await expect(openai.responses.create({ model, input: ask("[[slow 5000]] x") }, { signal: controller.signal })).rejects.toBeInstanceOf(
      APIUserAbortError,
    );
    const stream = openai.responses.stream({ model, input: ask("[[slow 5000]] y") });
    setTimeout(() => stream.abort(), 50);
    await expect(stream.finalResponse()).rejects.toBeInstanceOf(APIUserAbortError);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("answers N words, sample JSON for text.format, violating JSON for [[badjson]]", async () => {
    const { openai } = client();
    const words = await openai.responses.create({ model, input: ask("[[words 30]]") });
    expect(words.output_text.split(" ")).toHaveLength(30);

    const schema = {
      type: "object",
      properties: { answer: { type: "string" }, score: { type: "integer", minimum: 5 } },
      required: ["answer", "score"],
      additionalProperties: false,
    };
    const text = { format: { type: "json_schema" as const, name: "result", schema, strict: true } };
    const good = await openai.responses.stream({ model, input: ask("rate it"), text }).finalResponse();
    expect(JSON.parse(good.output_text)).toEqual({ answer: "sample", score: 5 });
    const bad = await openai.responses.create({ model, input: ask("rate it [[badjson]]"), text });
    expect(JSON.parse(bad.output_text)).toEqual({});
  });

  it("reports usage with cached_tokens counted inside input_tokens", async () => {
    const { openai, bodies } = client();
    const instructions = "I".repeat(200);
    const input: ResponseInputItem[] = [...ask("one"), { role: "assistant", content: "You said: one" }, ...ask("two")];
    const cached = await openai.responses.stream({ model, instructions, input, prompt_cache_key: "ses_1" }).finalResponse();
    expect(cached.usage).toEqual({
      input_tokens: Math.ceil((bodies[0]?.length ?? 0) / 4),
      input_tokens_details: { cached_tokens: 50, cache_write_tokens: 0 },
      output_tokens: Math.ceil("You said: two".length / 4),
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: Math.ceil((bodies[0]?.length ?? 0) / 4) + Math.ceil("You said: two".length / 4),
    });
    const uncached = await openai.responses.create({ model, instructions, input });
    expect(uncached.usage?.input_tokens_details.cached_tokens).toBe(0);
    const firstTurn = await openai.responses.create({ model, instructions, input: ask("one"), prompt_cache_key: "ses_1" });
    expect(firstTurn.usage?.input_tokens_details.cached_tokens).toBe(0);
  });

  it("answers OpenAI's 400 to a malformed body", async () => {
    const post = (body: string) =>
      handleMockModel(new Request("http://mock.local/v1/responses", { method: "POST", body, headers: { authorization: "Bearer k" } }));
    const broken = await post("{oops");
    expect(broken.status).toBe(400);
    expect(await broken.json()).toMatchObject({ error: { type: "invalid_request_error", param: null, code: null } });
    const missing = await post(JSON.stringify({ input: "x" }));
    expect(await missing.json()).toMatchObject({ error: { param: "model" } });
  });
});

/** The output items a client sends back as input: reasoning, messages and function calls. */
const sentBack = (output: { type: string }[]) =>
  output.flatMap((item) =>
    item.type === "reasoning" || item.type === "message" || item.type === "function_call" ? [item as ResponseInputItem] : [],
  );

describe("offline model: OpenAI Responses reasoning models", () => {
  const reasoner = "gpt-5-mini";
  const stateless = { store: false, include: ["reasoning.encrypted_content" as const] };

  it("thinks first: a reasoning item (summary when asked, encrypted content when included) and reasoning tokens", async () => {
    const { openai } = client();
    const plain = await openai.responses.create({ model: reasoner, input: ask("hi") });
    expect(plain.output.map((item) => item.type)).toEqual(["reasoning", "message"]);
    const [thinking] = plain.output;
    if (thinking?.type !== "reasoning") throw new Error("expected a reasoning item");
    expect(thinking.id).toMatch(/^rs_/);
    expect(thinking.summary).toEqual([]);
    expect(thinking.encrypted_content).toBeUndefined();
    const reasoningTokens = plain.usage?.output_tokens_details.reasoning_tokens ?? 0;
    expect(reasoningTokens).toBeGreaterThan(0);
    expect(plain.usage?.output_tokens).toBe(Math.ceil("You said: hi".length / 4) + reasoningTokens);

    const stream = openai.responses.stream({ model: reasoner, input: ask("hi"), reasoning: { summary: "auto" }, ...stateless });
    const summaryDeltas: string[] = [];
    stream.on("response.reasoning_summary_text.delta", (event) => summaryDeltas.push(event.delta));
    const full = await stream.finalResponse();
    const [summarized, message] = full.output;
    if (summarized?.type !== "reasoning" || message?.type !== "message") throw new Error("expected reasoning, then a message");
    expect(summarized.summary).toEqual([{ type: "summary_text", text: summaryDeltas.join("") }]);
    expect(summaryDeltas.length).toBeGreaterThan(1);
    expect(summarized.encrypted_content).toMatch(/^gAAAAA/);
    expect(message.id).toMatch(/^msg_/);
    expect(full.output_text).toBe("You said: hi");
    expect(full.reasoning).toEqual({ effort: "medium", summary: "auto" });
    expect(plain.reasoning).toEqual({ effort: "medium", summary: null });
  });

  it("leaves the reasoning item alone when the budget went on thinking ([[truncate 0]])", async () => {
    const { openai } = client();
    const spent = await openai.responses.stream({ model: reasoner, input: ask("[[truncate 0]] hi"), ...stateless }).finalResponse();
    expect([spent.status, spent.incomplete_details?.reason]).toEqual(["incomplete", "max_output_tokens"]);
    expect(spent.output.map((item) => item.type)).toEqual(["reasoning"]);
    expect(spent.output_text).toBe("");
  });

  it("accepts a multi-turn tool loop sent back item by item, stateless", async () => {
    const { openai } = client();
    const input: ResponseInputItem[] = ask('weather? [[tool get_weather {"city":"Paris"}]]');
    const first = await openai.responses.stream({ model: reasoner, input, ...stateless }).finalResponse();
    expect(first.output.map((item) => item.type)).toEqual(["reasoning", "function_call"]);
    const call = first.output[1];
    if (call?.type !== "function_call") throw new Error("expected a function_call item");
    input.push(...sentBack(first.output), { type: "function_call_output", call_id: call.call_id, output: "sunny" });
    const second = await openai.responses.stream({ model: reasoner, input, ...stateless }).finalResponse();
    expect(second.output.map((item) => item.type)).toEqual(["reasoning", "message"]);
    expect(second.output_text).toBe("You said: weather?\nget_weather returned: sunny");
    input.push(...sentBack(second.output), ...ask("thanks"));
    const third = await openai.responses.create({ model: reasoner, input, ...stateless });
    expect(third.output_text).toBe("You said: thanks");
  });
});

describe("offline model: OpenAI Responses refuses what OpenAI refuses", () => {
  const post = async (body: Record<string, unknown>) => {
    const response = await handleMockModel(
      new Request("http://mock.local/v1/responses", {
        method: "POST",
        body: JSON.stringify({ model: "gpt-5-mini", ...body }),
        headers: { authorization: "Bearer k" },
      }),
    );
    return { status: response.status, body: await response.json() };
  };
  const refusal = (message: string, param: string | null, code: string | null = null) => ({
    error: { message, type: "invalid_request_error", param, code },
  });
  const user = { role: "user", content: "hi" };
  const call = { type: "function_call", id: "fc_1", call_id: "call_1", name: "get_time", arguments: "{}" };
  const output = { type: "function_call_output", call_id: "call_1", output: "noon" };
  const said = (id?: string) => ({
    type: "message",
    ...(id ? { id } : {}),
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text: "hello", annotations: [] }],
  });

  /** A reasoning item the offline model made, followed by its message (what a first turn returns). */
  async function firstTurn() {
    const { openai } = client();
    const response = await openai.responses.create({
      model: "gpt-5-mini",
      input: "hi",
      store: false,
      include: ["reasoning.encrypted_content"],
    });
    const [reasoning, message] = response.output;
    if (reasoning?.type !== "reasoning" || message?.type !== "message") throw new Error("expected reasoning, then a message");
    return { reasoning, message };
  }

  it("a function_call_output whose call_id matches no earlier function_call", async () => {
    expect(await post({ input: [user, output, call] })).toEqual({
      status: 400,
      body: refusal("No tool call found for function call output with call_id call_1.", "input"),
    });
  });

  it("a function_call without its output", async () => {
    expect(await post({ input: [user, call] })).toEqual({
      status: 400,
      body: refusal("No tool output found for function call call_1.", "input"),
    });
  });

  it("a reasoning item without its required following item, or before another item than its own", async () => {
    const { reasoning, message } = await firstTurn();
    const stateless = { store: false, include: ["reasoning.encrypted_content"] };
    const withoutFollower = refusal(
      `Item '${reasoning.id}' of type 'reasoning' was provided without its required following item.`,
      "input",
    );
    // The id-less assistant message Agentry used to send after it.
    expect(await post({ ...stateless, input: [user, reasoning, { role: "assistant", content: "You said: hi" }, user] })).toEqual({
      status: 400,
      body: withoutFollower,
    });
    expect(await post({ ...stateless, input: [user, reasoning] })).toEqual({ status: 400, body: withoutFollower });
    expect(await post({ ...stateless, input: [user, reasoning, said("msg_other"), user] })).toEqual({ status: 400, body: withoutFollower });
    expect((await post({ ...stateless, input: [user, reasoning, message, user] })).status).toBe(200);
  });

  it("a reasoning item without its encrypted content when nothing is stored (404), or content OpenAI did not make", async () => {
    const { reasoning, message } = await firstTurn();
    const { encrypted_content: _content, ...byId } = reasoning;
    expect(await post({ store: false, input: [user, byId, message, user] })).toEqual({
      status: 404,
      body: refusal(
        `Item with id '${reasoning.id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`,
        "input",
      ),
    });
    const forged = { ...reasoning, encrypted_content: "gAAAAABforgedcontent==" };
    expect(await post({ store: false, input: [user, forged, message, user] })).toEqual({
      status: 400,
      body: refusal("The encrypted content gAAA...nt== could not be verified.", null, "invalid_encrypted_content"),
    });
  });

  it("an item id without its type's prefix", async () => {
    expect(await post({ input: [user, { ...call, id: "call_1" }, output] })).toEqual({
      status: 400,
      body: refusal("Invalid 'input[1].id': 'call_1'. Expected an ID that begins with 'fc'.", "input[1].id", "invalid_value"),
    });
    expect(await post({ input: [user, said("resp_1")] })).toEqual({
      status: 400,
      body: refusal("Invalid 'input[1].id': 'resp_1'. Expected an ID that begins with 'msg'.", "input[1].id", "invalid_value"),
    });
  });

  it("an unknown input item type", async () => {
    const { status, body } = await post({ input: [user, { type: "tool_result", call_id: "call_1", output: "x" }] });
    expect(status).toBe(400);
    expect(body).toMatchObject({ error: { type: "invalid_request_error", param: "input[1]", code: "invalid_value" } });
    expect((body as { error: { message: string } }).error.message).toMatch(
      /^Invalid value: 'tool_result'\. Supported values are: 'additional_tools', .*'function_call_output', .*'reasoning', .*and 'web_search_call'\.$/,
    );
  });

  it("a prompt_cache_key over 64 characters", async () => {
    expect(await post({ input: "hi", prompt_cache_key: "k".repeat(65) })).toEqual({
      status: 400,
      body: refusal(
        "Invalid 'prompt_cache_key': string too long. Expected a string with maximum length 64, but got a string with length 65 instead.",
        "prompt_cache_key",
        "string_above_max_length",
      ),
    });
    expect((await post({ input: "hi", prompt_cache_key: "k".repeat(64) })).status).toBe(200);
  });

  it("max_output_tokens under 16", async () => {
    expect(await post({ input: "hi", max_output_tokens: 15 })).toEqual({
      status: 400,
      body: refusal(
        "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got 15 instead.",
        "max_output_tokens",
        "integer_below_min_value",
      ),
    });
    expect((await post({ input: "hi", max_output_tokens: 16 })).status).toBe(200);
  });

  it("encrypted reasoning asked of a model that does not reason", async () => {
    expect(await post({ model: "gpt-4o-mini", input: "hi", include: ["reasoning.encrypted_content"] })).toEqual({
      status: 400,
      body: refusal("Encrypted content is not supported with this model.", "include"),
    });
  });
});
