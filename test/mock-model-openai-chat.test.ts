import { APIUserAbortError, BadRequestError, InternalServerError, RateLimitError } from "openai";
import type { ChatCompletionChunk, ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { describe, expect, it } from "vitest";
import { handleMockModel } from "../src/mock-model/index";
import { openaiClient } from "./support/mock-clients";

const client = openaiClient;

const ask = (content: string): ChatCompletionMessageParam[] => [{ role: "user", content }];
const model = "mock-1";

async function collect(stream: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the call to fail");
}

describe("offline model: OpenAI Chat Completions", () => {
  it("echoes the text outside directives (JSON)", async () => {
    const completion = await client().openai.chat.completions.create({ model, messages: ask("hello [[words 0]] there") });
    expect(completion.id).toMatch(/^chatcmpl-/);
    expect(completion.choices[0]?.finish_reason).toBe("stop");
    // [[words 0]] asks for zero words.
    expect(completion.choices[0]?.message.content).toBe("");
    const echo = await client().openai.chat.completions.create({ model, messages: ask("hello there") });
    expect(echo.choices[0]?.message).toMatchObject({ role: "assistant", content: "You said: hello there" });
  });

  it("streams one chunk per word, a finish chunk, and a usage chunk when asked", async () => {
    const { openai } = client();
    const chunks = await collect(
      await openai.chat.completions.create({
        model,
        messages: ask("one two"),
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    expect(chunks[0]?.choices[0]?.delta.role).toBe("assistant");
    const words = chunks.flatMap((c) => (c.choices[0]?.delta.content ? [c.choices[0].delta.content] : []));
    expect(words).toEqual(["You ", "said: ", "one ", "two"]);
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe("stop");
    const last = chunks.at(-1);
    expect(last?.choices).toEqual([]);
    expect(last?.usage?.completion_tokens).toBe(Math.ceil("You said: one two".length / 4));
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);

    const withoutUsage = await collect(await openai.chat.completions.create({ model, messages: ask("x"), stream: true }));
    expect(withoutUsage.some((c) => c.usage)).toBe(false);

    const final = await openai.chat.completions.stream({ model, messages: ask("one two") }).finalChatCompletion();
    expect(final.choices[0]?.message.content).toBe("You said: one two");
  });

  it("calls tools one per answer, or in parallel, and reports their results", async () => {
    const { openai } = client();
    const messages = ask('weather? [[tool get_weather {"city":"Paris"}]] [[tool get_time {"tz":"CET"}]]');
    for (const [name, result] of [
      ["get_weather", "sunny"],
      ["get_time", "noon"],
    ] as const) {
      const answer = await openai.chat.completions.stream({ model, messages }).finalChatCompletion();
      const choice = answer.choices[0];
      expect(choice?.finish_reason).toBe("tool_calls");
      expect(choice?.message.tool_calls).toHaveLength(1);
      const call = choice?.message.tool_calls?.[0];
      if (call?.type !== "function") throw new Error("expected a function tool call");
      expect(call.id).toMatch(/^call_/);
      expect(call.function.name).toBe(name);
      messages.push({ role: "assistant", content: null, tool_calls: [call] }, { role: "tool", tool_call_id: call.id, content: result });
    }
    const final = await openai.chat.completions.create({ model, messages });
    expect(final.choices[0]?.message.content).toBe("You said: weather?\nget_weather returned: sunny\nget_time returned: noon");

    const parallel = await openai.chat.completions.create({ model, messages: ask('[[tool a {"k":1}]] [[tool b]] [[parallel]]') });
    const calls = parallel.choices[0]?.message.tool_calls ?? [];
    expect(calls.map((c) => c.type === "function" && [c.function.name, JSON.parse(c.function.arguments)])).toEqual([
      ["a", { k: 1 }],
      ["b", {}],
    ]);
  });

  it("assembles streamed parallel tool calls by index", async () => {
    const chunks = await collect(
      await client().openai.chat.completions.create({
        model,
        messages: ask('[[tool first {"long":"a value longer than one chunk"}]] [[tool second]] [[parallel]]'),
        stream: true,
      }),
    );
    const args = new Map<number, string>();
    for (const chunk of chunks) {
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
        args.set(call.index, (args.get(call.index) ?? "") + (call.function?.arguments ?? ""));
      }
    }
    expect([...args.values()].map((text) => JSON.parse(text))).toEqual([{ long: "a value longer than one chunk" }, {}]);
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe("tool_calls");
  });

  it("fails with real error bodies: status, quota, context window", async () => {
    const error = await rejection(client(2).openai.chat.completions.create({ model, messages: ask("[[fail 500 x2]]") }));
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error instanceof InternalServerError && [error.status, error.type]).toEqual([500, "server_error"]);
    const ok = await client(3).openai.chat.completions.create({ model, messages: ask("[[fail 500 x2]] hi") });
    expect(ok.choices[0]?.message.content).toBe("You said: hi");

    const limited = await rejection(
      client()
        .openai.chat.completions.stream({ model, messages: ask("[[fail 429 x1 retry-after=4]]") })
        .finalChatCompletion(),
    );
    expect(limited).toBeInstanceOf(RateLimitError);
    expect(limited instanceof RateLimitError && [limited.code, limited.headers.get("retry-after")]).toEqual(["rate_limit_exceeded", "4"]);

    const quota = await rejection(client().openai.chat.completions.create({ model, messages: ask("[[quota]]") }));
    expect(quota instanceof RateLimitError && [quota.status, quota.code, quota.type]).toEqual([
      429,
      "insufficient_quota",
      "insufficient_quota",
    ]);
    const overflow = await rejection(client().openai.chat.completions.create({ model, messages: ask("[[context_overflow]]") }));
    expect(overflow).toBeInstanceOf(BadRequestError);
    expect(overflow instanceof BadRequestError && [overflow.code, overflow.param]).toEqual(["context_length_exceeded", "messages"]);
  });

  it("cuts the first attempt's stream before finish_reason and [DONE]", async () => {
    const messages = ask("alpha beta gamma [[cut]]");
    const raw = await handleMockModel(
      new Request("http://mock.local/v1/chat/completions", {
        method: "POST",
        headers: { authorization: "Bearer k", "x-agentry-attempt": "1" },
        body: JSON.stringify({ model, messages, stream: true }),
      }),
    );
    const text = await raw.text();
    expect(text).toContain('"content":"You "');
    expect(text).not.toContain("[DONE]");
    expect(text).not.toContain('"finish_reason":"stop"');
    await expect(client(1).openai.chat.completions.stream({ model, messages }).finalChatCompletion()).rejects.toThrow(
      "missing finish_reason",
    );
    const full = await client(2).openai.chat.completions.stream({ model, messages }).finalChatCompletion();
    expect(full.choices[0]?.message.content).toBe("You said: alpha beta gamma");
  });

  it("stops a slow stream promptly when aborted", async () => {
    const stream = client().openai.chat.completions.stream({ model, messages: ask("[[slow 4000]] a b c") });
    setTimeout(() => stream.abort(), 50);
    const started = Date.now();
    await expect(stream.finalChatCompletion()).rejects.toBeInstanceOf(APIUserAbortError);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("answers JSON for response_format json_schema and violating JSON for [[badjson]]", async () => {
    const { openai } = client();
    const schema = {
      type: "object",
      properties: { kind: { enum: ["x", "y"] }, items: { type: "array", items: { type: "integer" } } },
      required: ["kind"],
      additionalProperties: false,
    };
    const response_format = { type: "json_schema" as const, json_schema: { name: "out", schema, strict: false } };
    const good = await openai.chat.completions.create({ model, messages: ask("go"), response_format });
    expect(JSON.parse(good.choices[0]?.message.content ?? "")).toEqual({ kind: "x", items: [1] });
    const bad = await openai.chat.completions.create({ model, messages: ask("go [[badjson]]"), response_format });
    expect(JSON.parse(bad.choices[0]?.message.content ?? "")).toEqual({ items: 12345 });
  });

  it("reports usage with cached prompt tokens inside prompt_tokens", async () => {
    const { openai, bodies } = client();
    const messages: ChatCompletionMessageParam[] = [
      { role: "system", content: "P".repeat(80) },
      ...ask("one"),
      { role: "assistant", content: "You said: one" },
      ...ask("two"),
    ];
    const completion = await openai.chat.completions.create({ model, messages, prompt_cache_key: "ses_x" });
    const prompt = Math.ceil((bodies[0]?.length ?? 0) / 4);
    expect(completion.usage).toMatchObject({
      prompt_tokens: prompt,
      completion_tokens: 4,
      total_tokens: prompt + 4,
      prompt_tokens_details: { cached_tokens: 20 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
  });
});
