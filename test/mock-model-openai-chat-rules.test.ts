import { BadRequestError } from "openai";
import type { ChatCompletionCreateParamsNonStreaming, ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { describe, expect, it } from "vitest";
import type { Message } from "../src/core/messages";
import { OpenAIChatProvider, toChatRequest } from "../src/providers/openai-chat";
import { inProcessFetch } from "../src/providers/sdk-config";
import { handleMockModel } from "../src/mock-model/index";
import type { ModelRequest } from "../src/providers/types";
import { gifOfFrames } from "./support/gif";
import { pdfOfPages, pngOfSize } from "./support/media";
import { openaiClient } from "./support/mock-clients";

const model = "mock-1";
const call = (id: string, name = "get_time") => ({ id, type: "function" as const, function: { name, arguments: "{}" } });
const assistantCalling = (...ids: string[]): ChatCompletionMessageParam => ({
  role: "assistant",
  content: null,
  tool_calls: ids.map((id) => call(id)),
});
const toolAnswer = (id: string): ChatCompletionMessageParam => ({ role: "tool", tool_call_id: id, content: "noon" });
const user = (content: string): ChatCompletionMessageParam => ({ role: "user", content });

/** What OpenAI answers a bad request: a 400 whose body names the message, param and code. */
type Refusal = { message: string; param: string | null; code: string | null };

async function refusal(body: Record<string, unknown>): Promise<Refusal> {
  const error = await openaiClient()
    .openai.chat.completions.create({ model, ...body } as unknown as ChatCompletionCreateParamsNonStreaming)
    .then(
      () => null,
      (e: unknown) => e,
    );
  if (!(error instanceof BadRequestError)) throw new Error(`expected a 400, got ${String(error)}`);
  expect(error.status).toBe(400);
  expect(error.type).toBe("invalid_request_error");
  return { message: (error.error as { message: string }).message, param: error.param ?? null, code: error.code ?? null };
}

describe("offline model: Chat Completions refuses what OpenAI refuses", () => {
  it("a tool message with no assistant tool_calls before it", async () => {
    expect(await refusal({ messages: [user("hi"), toolAnswer("call_1")] })).toEqual({
      message: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
      param: "messages.[1].role",
      code: null,
    });
  });

  it("a tool message after a user message that follows the tool calls", async () => {
    const messages = [user("hi"), assistantCalling("call_1"), toolAnswer("call_1"), user("more"), toolAnswer("call_1")];
    expect((await refusal({ messages })).param).toBe("messages.[4].role");
  });

  it("a tool message answering an id the previous assistant message did not call", async () => {
    expect(await refusal({ messages: [user("hi"), assistantCalling("call_1"), toolAnswer("call_2")] })).toEqual({
      message: "Invalid parameter: 'tool_call_id' of 'call_2' not found in 'tool_calls' of previous message.",
      param: "messages.[2].tool_call_id",
      code: null,
    });
  });

  it("tool calls left without their tool messages before the next message, or at the end", async () => {
    const expected = {
      message:
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_2",
      param: "messages.[1].role",
      code: null,
    };
    expect(await refusal({ messages: [user("hi"), assistantCalling("call_1", "call_2"), toolAnswer("call_1"), user("go on")] })).toEqual(
      expected,
    );
    expect(await refusal({ messages: [user("hi"), assistantCalling("call_1", "call_2"), toolAnswer("call_1")] })).toEqual(expected);
  });

  it("an unknown or missing role", async () => {
    expect(await refusal({ messages: [{ role: "bot", content: "x" }] })).toEqual({
      message: "Invalid value: 'bot'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.",
      param: "messages[0].role",
      code: "invalid_value",
    });
    expect(await refusal({ messages: [{ content: "x" }] })).toMatchObject({
      param: "messages[0].role",
      code: "missing_required_parameter",
    });
  });

  it("an empty messages array, a user message without content, an assistant message with neither content nor tool calls", async () => {
    expect(await refusal({ messages: [] })).toMatchObject({ param: "messages", code: "empty_array" });
    expect(await refusal({ messages: [{ role: "user" }] })).toEqual({
      message: "Missing required parameter: 'messages[0].content'.",
      param: "messages[0].content",
      code: "missing_required_parameter",
    });
    expect(await refusal({ messages: [user("hi"), { role: "assistant", content: null }] })).toEqual({
      message: "Invalid value for 'content': expected a string, got null.",
      param: "messages.[1].content",
      code: null,
    });
  });

  it("a tool call id longer than 40 characters", async () => {
    const id = `call_${"x".repeat(40)}`;
    expect(await refusal({ messages: [user("hi"), assistantCalling(id), toolAnswer(id)] })).toEqual({
      message: `Invalid 'messages[1].tool_calls[0].id': string too long. Expected a string with maximum length 40, but got a string with length 45 instead.`,
      param: "messages[1].tool_calls[0].id",
      code: "string_above_max_length",
    });
  });

  it("sampling other than the default on a reasoning model, and reasoning_effort on another", async () => {
    expect(await refusal({ model: "o3", messages: [user("hi")], temperature: 0.5 })).toEqual({
      message: "Unsupported value: 'temperature' does not support 0.5 with this model. Only the default (1) value is supported.",
      param: "temperature",
      code: "unsupported_value",
    });
    expect(await refusal({ model: "gpt-4.1", messages: [user("hi")], reasoning_effort: "low" })).toEqual({
      message: "Unsupported parameter: 'reasoning_effort' is not supported with this model.",
      param: "reasoning_effort",
      code: "unsupported_parameter",
    });
    const fine = await openaiClient().openai.chat.completions.create({
      model: "o3",
      messages: [user("hi")],
      temperature: 1,
      reasoning_effort: "low",
    });
    expect(fine.choices[0]?.message.content).toBe("You said: hi");
  });

  it("a max_completion_tokens over the model's maximum", async () => {
    expect(await refusal({ model: "gpt-4o", messages: [user("hi")], max_completion_tokens: 20480 })).toEqual({
      message:
        "max_completion_tokens is too large: 20480. This model supports at most 16384 completion tokens, whereas you provided 20480.",
      param: "max_completion_tokens",
      code: "invalid_value",
    });
  });

  it("more than 4 stop sequences, and stop on a reasoning model", async () => {
    expect(await refusal({ messages: [user("hi")], stop: ["a", "b", "c", "d", "e"] })).toEqual({
      message: "Invalid 'stop': array too long. Expected an array with maximum length 4, but got an array with length 5 instead.",
      param: "stop",
      code: "array_above_max_length",
    });
    expect(await refusal({ model: "o3", messages: [user("hi")], stop: ["a"] })).toEqual({
      message: "Unsupported parameter: 'stop' is not supported with this model.",
      param: "stop",
      code: "unsupported_parameter",
    });
  });

  it("function tools on gpt-5.4 and later unless reasoning_effort is none", async () => {
    const tools = [{ type: "function", function: { name: "f", parameters: { type: "object" } } }];
    expect(await refusal({ model: "gpt-5.6-terra", messages: [user("hi")], tools })).toEqual({
      message:
        "Function tools with reasoning_effort are not supported for gpt-5.6-terra in /v1/chat/completions. To use function tools, use /v1/responses or set reasoning_effort to 'none'.",
      param: "reasoning_effort",
      code: null,
    });
    const fine = await openaiClient().openai.chat.completions.create({
      model: "gpt-5.6-terra",
      messages: [user("hi")],
      tools,
      reasoning_effort: "none",
    } as never);
    expect((fine as { choices: { message: { content: string } }[] }).choices[0]?.message.content).toBe("You said: hi");
  });

  it("a tool description over 1024 characters", async () => {
    const tools = [{ type: "function", function: { name: "f", description: "d".repeat(1025), parameters: { type: "object" } } }];
    expect(await refusal({ messages: [user("hi")], tools })).toEqual({
      message:
        "Invalid 'tools[0].function.description': string too long. Expected a string with maximum length 1024, but got a string with length 1025 instead.",
      param: "tools[0].function.description",
      code: "string_above_max_length",
    });
  });

  it("max_completion_tokens below 1, and max_tokens on a reasoning model", async () => {
    expect(await refusal({ messages: [user("hi")], max_completion_tokens: 0 })).toEqual({
      message: "Invalid 'max_completion_tokens': integer below minimum value. Expected a value >= 1, but got 0 instead.",
      param: "max_completion_tokens",
      code: "integer_below_min_value",
    });
    const unsupported = {
      message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
      param: "max_tokens",
      code: "unsupported_parameter",
    };
    for (const reasoning of ["gpt-5", "gpt-5.2-2025-12-11", "o3", "o4-mini"]) {
      expect(await refusal({ model: reasoning, messages: [user("hi")], max_tokens: 100 })).toEqual(unsupported);
    }
    const older = await openaiClient().openai.chat.completions.create({ model: "gpt-4o", messages: [user("hi")], max_tokens: 100 });
    expect(older.choices[0]?.message.content).toBe("You said: hi");
  });

  it("stream_options without stream, a prompt_cache_key over 64 characters, a bad tool or schema name", async () => {
    expect(await refusal({ messages: [user("hi")], stream_options: { include_usage: true } })).toMatchObject({ param: "stream_options" });
    expect(await refusal({ messages: [user("hi")], prompt_cache_key: "k".repeat(65) })).toEqual({
      message:
        "Invalid 'prompt_cache_key': string too long. Expected a string with maximum length 64, but got a string with length 65 instead.",
      param: "prompt_cache_key",
      code: "string_above_max_length",
    });
    const tools = [{ type: "function", function: { name: "get time", parameters: { type: "object" } } }];
    expect(await refusal({ messages: [user("hi")], tools })).toMatchObject({ param: "tools[0].function.name", code: "invalid_value" });
    const response_format = { type: "json_schema", json_schema: { name: "x".repeat(65), schema: { type: "object" } } };
    expect(await refusal({ messages: [user("hi")], response_format })).toMatchObject({
      param: "response_format.json_schema.name",
      code: "string_above_max_length",
    });
  });

  it("C6: an empty content array", async () => {
    expect(await refusal({ messages: [{ role: "user", content: [] }] })).toEqual({
      message: "Invalid 'messages[0].content': empty array. Expected an array with minimum length 1, but got an empty array instead.",
      param: "messages[0].content",
      code: "empty_array",
    });
  });

  it("C10: a tool message's tool_call_id over 40 characters", async () => {
    const id = `call_${"x".repeat(40)}`;
    expect(await refusal({ messages: [user("hi"), { role: "tool", tool_call_id: id, content: "noon" }] })).toEqual({
      message:
        "Invalid 'messages[1].tool_call_id': string too long. Expected a string with maximum length 40, but got a string with length 45 instead.",
      param: "messages[1].tool_call_id",
      code: "string_above_max_length",
    });
  });

  it("C11: a content string over 10,485,760 characters", async () => {
    expect(await refusal({ messages: [user("x".repeat(10_485_761))] })).toEqual({
      message:
        "Invalid 'messages[0].content': string too long. Expected a string with maximum length 10485760, but got a string with length 10485761 instead.",
      param: "messages[0].content",
      code: "string_above_max_length",
    });
  });

  it("C14: tool_choice or parallel_tool_calls without tools", async () => {
    expect(await refusal({ messages: [user("hi")], tool_choice: "auto" })).toEqual({
      message: "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
      param: "tool_choice",
      code: null,
    });
    expect(await refusal({ messages: [user("hi")], parallel_tool_calls: true })).toEqual({
      message: "Invalid value for 'parallel_tool_calls': 'parallel_tool_calls' is only allowed when 'tools' are specified.",
      param: "parallel_tool_calls",
      code: null,
    });
  });

  it("C15: more than 128 tools", async () => {
    const tools = Array.from({ length: 129 }, (_, i) => ({
      type: "function",
      function: { name: `t${i}`, parameters: { type: "object" } },
    }));
    expect(await refusal({ messages: [user("hi")], tools })).toEqual({
      message: "Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array with length 129 instead.",
      param: "tools",
      code: "array_above_max_length",
    });
  });

  it("C1/C17: gpt-6 models reason (max_tokens and sampling refused)", async () => {
    expect(await refusal({ model: "gpt-6-luna", messages: [user("hi")], max_tokens: 100 })).toMatchObject({
      param: "max_tokens",
      code: "unsupported_parameter",
    });
    expect(await refusal({ model: "gpt-6-luna", messages: [user("hi")], temperature: 0.2 })).toMatchObject({
      param: "temperature",
      code: "unsupported_value",
    });
  });

  it("C19: a reasoning_effort the model does not take", async () => {
    expect(await refusal({ model: "gpt-5.2", messages: [user("hi")], reasoning_effort: "minimal" })).toEqual({
      message:
        "Unsupported value: 'minimal' is not supported with the 'gpt-5.2' model. Supported values are: 'none', 'low', 'medium', 'high', and 'xhigh'.",
      param: "reasoning_effort",
      code: "unsupported_value",
    });
  });

  it("C20: sampling and counts out of range", async () => {
    expect(await refusal({ messages: [user("hi")], temperature: 2.5 })).toEqual({
      message: "Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got 2.5 instead.",
      param: "temperature",
      code: "decimal_above_max_value",
    });
    expect(await refusal({ messages: [user("hi")], presence_penalty: -3 })).toMatchObject({
      param: "presence_penalty",
      code: "decimal_below_min_value",
    });
    expect(await refusal({ messages: [user("hi")], n: 0 })).toMatchObject({ param: "n", code: "integer_below_min_value" });
  });

  it("C23: a safety_identifier over 64 characters", async () => {
    expect(await refusal({ messages: [user("hi")], safety_identifier: "u".repeat(65) })).toEqual({
      message:
        "Invalid 'safety_identifier': string too long. Expected a string with maximum length 64, but got a string with length 65 instead.",
      param: "safety_identifier",
      code: "string_above_max_length",
    });
  });

  it("C24: a strict schema over the structured-output limits", async () => {
    const response_format = {
      type: "json_schema",
      json_schema: {
        name: "output",
        strict: true,
        schema: {
          type: "object",
          properties: { a: { type: "string", enum: Array.from({ length: 1001 }, (_, i) => `v${i}`) } },
          required: ["a"],
          additionalProperties: false,
        },
      },
    };
    expect(await refusal({ messages: [user("hi")], response_format })).toEqual({
      message:
        "Invalid schema for response_format 'output': Expected at most 1000 enum values in total within a single schema when using structured outputs, but received 1001. Consider reducing the number of enums, or use 'strict: false' to opt out of structured outputs.",
      param: "response_format",
      code: "invalid_json_schema",
    });
  });

  it("C25/C26: an image over 30,000 patches, an animated GIF, a bad detail, over 100 PDF pages", async () => {
    const part = (url: string, detail?: string) => ({ type: "image_url", image_url: { url, ...(detail ? { detail } : {}) } });
    const png = (w: number, h: number) => `data:image/png;base64,${pngOfSize(w, h)}`;
    expect(await refusal({ messages: [{ role: "user", content: [part(png(8000, 6000))] }] })).toEqual({
      message:
        "The image you provided requires 47000 patches after processing, exceeding the limit of 30000. Please resize the image and try again.",
      param: "messages",
      code: "invalid_value",
    });
    expect(await refusal({ messages: [{ role: "user", content: [part(`data:image/gif;base64,${gifOfFrames(3)}`)] }] })).toEqual({
      message:
        "You uploaded an unsupported image. Please make sure your image has of one the following formats: ['png', 'jpeg', 'gif', 'webp'].",
      param: null,
      code: "invalid_image_format",
    });
    expect(await refusal({ messages: [{ role: "user", content: [part(png(1, 1), "original")] }] })).toEqual({
      message: "Invalid value: 'original'. Supported values are: 'auto', 'low', and 'high'.",
      param: "messages[0].content[0].image_url.detail",
      code: "invalid_value",
    });
    const pdf = { type: "file", file: { filename: "a.pdf", file_data: `data:application/pdf;base64,${pdfOfPages(101)}` } };
    expect(await refusal({ messages: [{ role: "user", content: [pdf] }] })).toEqual({
      message: "Invalid 'messages': too many PDF pages in one request. Expected at most 100, but got 101 instead.",
      param: "messages",
      code: "invalid_value",
    });
  });

  it("C28: json_object without the word json in the messages", async () => {
    expect(await refusal({ messages: [user("hi")], response_format: { type: "json_object" } })).toEqual({
      message: "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.",
      param: "messages",
      code: null,
    });
    const fine = await openaiClient().openai.chat.completions.create({
      model,
      messages: [user("answer in JSON")],
      response_format: { type: "json_object" },
    });
    expect(fine.choices[0]?.message.content).toBeTypeOf("string");
  });

  it("accepts parallel tool calls answered in any order before the next message", async () => {
    const messages = [user("hi"), assistantCalling("call_1", "call_2"), toolAnswer("call_2"), toolAnswer("call_1"), user("go on")];
    const answer = await openaiClient().openai.chat.completions.create({ model, messages });
    expect(answer.choices[0]?.message.content).toBe("You said: go on");
  });
});

describe("the Chat adapter's requests pass those rules", () => {
  const bodies: string[] = [];
  const provider = new OpenAIChatProvider({
    apiKey: "sk-test",
    baseURL: "http://mock.local/v1",
    fetch: inProcessFetch(async (request) => {
      bodies.push(await request.clone().text());
      return handleMockModel(request);
    }),
  });
  const request = (messages: Message[], extra: Partial<ModelRequest> = {}): ModelRequest => ({
    model: "gpt-5",
    messages,
    tools: [{ name: "get_time", parameters: { type: "object", properties: {} } }],
    max_output_tokens: 1,
    attempt: 1,
    ...extra,
  });
  const text = (role: "user" | "assistant", value: string): Message => ({ role, content: [{ type: "text", text: value }] });

  it("sends max_completion_tokens, never max_tokens, and a reasoning model accepts it", async () => {
    const response = await provider.call(request([text("user", "hi")]), {});
    expect(response.content).toEqual([{ type: "text", text: "You said: hi" }]);
    const sent = JSON.parse(bodies.at(-1) ?? "{}") as Record<string, unknown>;
    expect(sent).toMatchObject({ model: "gpt-5", max_completion_tokens: 1, stream: true });
    expect(sent).not.toHaveProperty("max_tokens");
    expect(toChatRequest(request([text("user", "hi")]))).not.toHaveProperty("max_tokens");
  });

  it("drops a tool call whose result never came (a cancelled turn) and sends the rest in order", async () => {
    const messages: Message[] = [
      text("user", "first"),
      {
        role: "assistant",
        content: [
          { type: "text", text: "checking" },
          { type: "tool_call", tool_call_id: "call_lost", name: "get_time", arguments: {} },
        ],
      },
      text("user", "second"),
      { role: "assistant", content: [{ type: "tool_call", tool_call_id: "call_ok", name: "get_time", arguments: {} }] },
      { role: "tool", content: [{ type: "tool_result", tool_call_id: "call_ok", output: "noon", is_error: false }] },
      { role: "tool", content: [{ type: "tool_result", tool_call_id: "call_stray", output: "late", is_error: false }] },
      text("user", "third"),
    ];
    const response = await provider.call(request(messages), {});
    expect(response.content).toEqual([{ type: "text", text: "You said: third" }]);
    const sent = JSON.parse(bodies.at(-1) ?? "{}") as { messages: ChatCompletionMessageParam[] };
    expect(sent.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "tool", "user"]);
    expect(sent.messages[1]).toEqual({ role: "assistant", content: "checking" });
  });
});
