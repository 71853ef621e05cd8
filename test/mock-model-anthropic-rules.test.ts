import { BadRequestError } from "@anthropic-ai/sdk";
import type { MessageCreateParamsNonStreaming, MessageParam } from "@anthropic-ai/sdk/resources/messages";
import { describe, expect, it } from "vitest";
import { signThinking } from "../src/mock-model/anthropic-thinking";
import { handleMockModel } from "../src/mock-model/index";
import { pngOfSize } from "./support/media";
import { anthropicClient } from "./support/mock-clients";

const base = { model: "mock-1", max_tokens: 1024 } as const;
const tools = [{ name: "lookup", input_schema: { type: "object" as const } }];
const call = (id = "toolu_1"): MessageParam => ({ role: "assistant", content: [{ type: "tool_use", id, name: "lookup", input: {} }] });
const result = (id = "toolu_1"): MessageParam => ({ role: "user", content: [{ type: "tool_result", tool_use_id: id, content: "found" }] });
const ask = (text: string): MessageParam => ({ role: "user", content: text });

/** A closed object schema of `count` properties of one schema, optional unless `required`. */
function objectOf(count: number, property: Record<string, unknown>, required = false) {
  const names = Array.from({ length: count }, (_, i) => `p${i}`);
  return {
    type: "object",
    properties: Object.fromEntries(names.map((name) => [name, property])),
    ...(required ? { required: names } : {}),
    additionalProperties: false,
  };
}

/** Posts a raw body (no SDK types in the way) and returns the status and the parsed error body. */
async function post(body: unknown) {
  const response = await handleMockModel(
    new Request("http://mock.local/v1/messages", { method: "POST", headers: { "x-api-key": "k" }, body: JSON.stringify(body) }),
  );
  return { status: response.status, body: await response.json<{ type: string; error?: { type: string; message: string } }>() };
}

const refusals: [string, unknown, string][] = [
  ["a negative max_tokens", { ...base, max_tokens: -1, messages: [ask("hi")] }, "max_tokens: Input should be greater than or equal to 0"],
  [
    "max_tokens 0 with a forced tool",
    { ...base, max_tokens: 0, tools, tool_choice: { type: "any" }, messages: [ask("hi")] },
    "max_tokens: must be at least 1 when tool_choice forces tool use",
  ],
  ["no messages", { ...base, messages: [] }, "messages: at least one message is required"],
  [
    "more than 100,000 messages",
    { ...base, messages: Array.from({ length: 100_001 }, () => ask("hi")) },
    "messages: List should have at most 100000 items after validation, not 100001",
  ],
  [
    "a final assistant message on a model without prefill",
    { ...base, model: "claude-opus-4-6", messages: [ask("hi"), { role: "assistant", content: "Sure," }] },
    "This model does not support assistant message prefill. The conversation must end with a user message.",
  ],
  [
    "an empty system prompt",
    { ...base, system: [{ type: "text", text: "" }], messages: [ask("hi")] },
    "system: text content blocks must be non-empty",
  ],
  [
    "a cache breakpoint on an empty system block",
    {
      ...base,
      system: [
        { type: "text", text: "s" },
        { type: "text", text: "", cache_control: { type: "ephemeral" } },
      ],
      messages: [ask("hi")],
    },
    "system.1: cache_control cannot be set for empty text blocks",
  ],
  [
    "a cache breakpoint on an empty message block",
    {
      ...base,
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "hi" },
            { type: "text", text: "", cache_control: { type: "ephemeral" } },
          ],
        },
      ],
    },
    "messages.0.content.1: cache_control cannot be set for empty text blocks",
  ],
  [
    "text before a tool_result in a user message",
    {
      ...base,
      tools,
      messages: [
        ask("hi"),
        call(),
        {
          role: "user",
          content: [
            { type: "text", text: "here" },
            { type: "tool_result", tool_use_id: "toolu_1", content: "found" },
          ],
        },
      ],
    },
    "messages.2.content.1: `tool_result` blocks must come first in a user message, before any other content",
  ],
  [
    "a tool name with a character outside the pattern",
    { ...base, tools: [{ name: "look.up", input_schema: { type: "object" } }], messages: [ask("hi")] },
    "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'",
  ],
  [
    "a tool name over 128 characters",
    { ...base, tools: [{ name: "a".repeat(129), input_schema: { type: "object" } }], messages: [ask("hi")] },
    "tools.0.custom.name: String should have at most 128 characters",
  ],
  ["two tools of one name", { ...base, tools: [...tools, ...tools], messages: [ask("hi")] }, "tools: Tool names must be unique."],
  [
    "21 strict tools",
    {
      ...base,
      tools: Array.from({ length: 21 }, (_, i) => ({
        name: `t${i}`,
        strict: true,
        input_schema: { type: "object", properties: {}, additionalProperties: false },
      })),
      messages: [ask("hi")],
    },
    "Too many strict tools (21). The maximum number of strict tools supported is 20.",
  ],
  [
    "a tool_choice without tools",
    { ...base, tool_choice: { type: "auto" }, messages: [ask("hi")] },
    "tool_choice may only be specified while providing tools.",
  ],
  [
    "thinking disabled on a model that always thinks",
    { ...base, model: "claude-opus-5-5", thinking: { type: "disabled" }, messages: [ask("hi")] },
    '"thinking.type.disabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.',
  ],
  [
    "a tool loop with thinking whose assistant turn has no thinking block",
    { ...base, tools, thinking: { type: "adaptive" }, messages: [ask("hi"), call(), result()] },
    "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking",
  ],
  [
    "a changed thinking block in the latest assistant message",
    {
      ...base,
      messages: [
        ask("hi"),
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "changed", signature: signThinking("t") },
            { type: "text", text: "ok" },
          ],
        },
        ask("more"),
      ],
    },
    "messages.1.content.0: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified.",
  ],
  [
    "25 optional parameters in an output schema",
    { ...base, messages: [ask("hi")], output_config: { format: { type: "json_schema", schema: objectOf(25, { type: "string" }) } } },
    "Schemas contains too many optional parameters (25), which would make grammar compilation inefficient. Reduce the number of optional parameters in your tool schemas (limit: 24).",
  ],
  [
    "optional parameters over 24 across an output schema and a strict tool",
    {
      ...base,
      tools: [{ name: "f", strict: true, input_schema: objectOf(12, { type: "string" }) }],
      messages: [ask("hi")],
      output_config: { format: { type: "json_schema", schema: objectOf(13, { type: "string" }) } },
    },
    "Schemas contains too many optional parameters (25), which would make grammar compilation inefficient. Reduce the number of optional parameters in your tool schemas (limit: 24).",
  ],
  [
    "17 union-typed parameters in an output schema",
    {
      ...base,
      messages: [ask("hi")],
      output_config: { format: { type: "json_schema", schema: objectOf(17, { type: ["string", "null"] }, true) } },
    },
    "Schemas contains too many parameters with union types (17 parameters with type arrays or anyOf). This causes exponential compilation cost. Reduce the number of nullable or union-typed parameters (limit: 16 parameters with unions).",
  ],
  [
    "an effort outside the API's values",
    { ...base, output_config: { effort: "extreme" }, messages: [ask("hi")] },
    "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'",
  ],
  [
    "an unknown top-level field",
    { ...base, frequency_penalty: 0.5, messages: [ask("hi")] },
    "frequency_penalty: Extra inputs are not permitted",
  ],
  [
    "an assistant first",
    { ...base, messages: [{ role: "assistant", content: "hi" }, ask("hi")] },
    'messages: first message must use the "user" role',
  ],
  [
    "an empty text block",
    { ...base, messages: [{ role: "user", content: [{ type: "text", text: "" }] }] },
    "messages: text content blocks must be non-empty",
  ],
  [
    "a whitespace-only text block",
    { ...base, messages: [{ role: "user", content: [{ type: "text", text: "\n\n" }] }] },
    "messages: text content blocks must contain non-whitespace text",
  ],
  [
    'a "\\n\\n" block beside a tool_use',
    {
      ...base,
      tools,
      messages: [
        ask("hi"),
        {
          role: "assistant",
          content: [
            { type: "text", text: "\n\n" },
            { type: "tool_use", id: "toolu_1", name: "lookup", input: {} },
          ],
        },
        result(),
      ],
    },
    "messages: text content blocks must contain non-whitespace text",
  ],
  [
    "tool blocks without tools",
    { ...base, messages: [ask("hi"), call(), result()] },
    "Requests which include `tool_use` or `tool_result` blocks must define tools.",
  ],
  [
    "a tool_use without its result",
    { ...base, tools, messages: [ask("hi"), call(), ask("and?")] },
    "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
  ],
  [
    "a tool_result for no tool_use of the previous message",
    { ...base, tools, messages: [ask("hi"), call(), result(), { role: "assistant", content: "ok" }, result()] },
    "messages.4.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_1. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
  ],
  [
    "a tool_use id outside the pattern",
    { ...base, tools, messages: [ask("hi"), call("call/1"), result("call/1")] },
    "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
  ],
  [
    "five cache breakpoints",
    {
      ...base,
      system: [{ type: "text", text: "s", cache_control: { type: "ephemeral" } }],
      messages: ["a", "b", "c", "d"].map((text) => ({
        role: "user",
        content: [{ type: "text", text, cache_control: { type: "ephemeral" } }],
      })),
    },
    "A maximum of 4 blocks with cache_control may be provided. Found 5.",
  ],
  [
    "an open object in an output schema",
    { ...base, messages: [ask("hi")], output_config: { format: { type: "json_schema", schema: { type: "object", properties: {} } } } },
    "output_config.format.schema: For 'object' type, 'additionalProperties' must be explicitly set to false",
  ],
  [
    "numeric limits in an output schema",
    {
      ...base,
      messages: [ask("hi")],
      output_config: {
        format: {
          type: "json_schema",
          schema: { type: "object", properties: { n: { type: "integer", minimum: 1 } }, additionalProperties: false },
        },
      },
    },
    "output_config.format.schema.properties.n: For 'integer' type, properties minimum are not supported",
  ],
  [
    "minItems above 1 in an output schema",
    {
      ...base,
      messages: [ask("hi")],
      output_config: {
        format: {
          type: "json_schema",
          schema: { type: "object", properties: { a: { type: "array", minItems: 2 } }, additionalProperties: false },
        },
      },
    },
    "output_config.format.schema.properties.a: For 'array' type, 'minItems' values other than 0 or 1 are not supported",
  ],
  [
    "a thinking block whose signature the model did not give",
    {
      ...base,
      messages: [
        ask("hi"),
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "t", signature: "forged" },
            { type: "text", text: "ok" },
          ],
        },
        ask("more"),
      ],
    },
    "messages.1.content.0: Invalid `signature` in `thinking` block",
  ],
  [
    "a whitespace-only system prompt",
    { ...base, system: [{ type: "text", text: " \n" }], messages: [ask("hi")] },
    "system: text content blocks must contain non-whitespace text",
  ],
  [
    "a max_tokens over the model's maximum",
    { ...base, model: "claude-3-haiku-20240307", max_tokens: 5000, messages: [ask("hi")] },
    "max_tokens: 5000 > 4096, which is the maximum allowed number of output tokens for claude-3-haiku-20240307",
  ],
  [
    "manual thinking with a forced tool",
    { ...base, tools, tool_choice: { type: "any" }, thinking: { type: "enabled", budget_tokens: 1024 }, messages: [ask("hi")] },
    "Thinking may not be enabled when tool_choice forces tool use.",
  ],
  [
    "manual thinking on a model that takes only adaptive thinking",
    { ...base, model: "claude-opus-4-7", thinking: { type: "enabled", budget_tokens: 1024 }, messages: [ask("hi")] },
    '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.',
  ],
  [
    "a tool input_schema that is not valid JSON Schema",
    { ...base, tools: [{ name: "f", input_schema: { type: "object", properties: { a: { type: "strng" } } } }], messages: [ask("hi")] },
    "tools.0.custom.input_schema: JSON schema is invalid. It must match JSON Schema draft 2020-12",
  ],
  [
    "a forced tool on a model that takes only auto and none",
    { ...base, model: "claude-fable-5-1", tools, tool_choice: { type: "any" }, messages: [ask("hi")] },
    'tool_choice: type "tool" and "any" are not supported for this model.',
  ],
  [
    "an empty stop sequence",
    { ...base, stop_sequences: [""], messages: [ask("hi")] },
    "stop_sequences: each stop sequence must be non-empty",
  ],
  [
    "a whitespace stop sequence",
    { ...base, stop_sequences: [" \n"], messages: [ask("hi")] },
    "stop_sequences: each stop sequence must contain non-whitespace",
  ],
  // API version 2026-10-21 removed the sampling settings, even at their defaults.
  ["a temperature", { ...base, temperature: 1, messages: [ask("hi")] }, "temperature: Extra inputs are not permitted"],
  ["a top_p", { ...base, top_p: 0.9, messages: [ask("hi")] }, "top_p: Extra inputs are not permitted"],
  ["a top_k", { ...base, top_k: 5, messages: [ask("hi")] }, "top_k: Extra inputs are not permitted"],
  [
    "a thinking budget under 1024",
    { ...base, thinking: { type: "enabled", budget_tokens: 100 }, messages: [ask("hi")] },
    "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
  ],
  [
    "a 1h cache breakpoint after a 5m one (tools, then system, then messages)",
    {
      ...base,
      system: [{ type: "text", text: "rules", cache_control: { type: "ephemeral" } }],
      messages: [{ role: "user", content: [{ type: "text", text: "hi", cache_control: { type: "ephemeral", ttl: "1h" } }] }],
    },
    "messages.0.content.0.cache_control.ttl: a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block.",
  ],
  [
    "a cache ttl that is neither 5m nor 1h",
    { ...base, system: [{ type: "text", text: "rules", cache_control: { type: "ephemeral", ttl: "10m" } }], messages: [ask("hi")] },
    "system.0.cache_control.ttl: Input should be '5m' or '1h'",
  ],
  [
    "a document in an assistant message",
    {
      ...base,
      messages: [
        ask("hi"),
        { role: "assistant", content: [{ type: "document", source: { type: "text", media_type: "text/plain", data: "notes" } }] },
        ask("and?"),
      ],
    },
    "messages.1.content.0: `document` blocks are only allowed in user messages",
  ],
  [
    "citations on a user's text",
    {
      ...base,
      messages: [
        {
          role: "user",
          content: [
            {
              type: "text",
              text: "hi",
              citations: [{ type: "char_location", cited_text: "h", document_index: 0, start_char_index: 0, end_char_index: 1 }],
            },
          ],
        },
      ],
    },
    "messages.0.content.0.text.citations: citations are not allowed in user messages",
  ],
  [
    "an image that asks for an error rather than downsizing, over the model's size",
    {
      ...base,
      messages: [
        {
          role: "user",
          content: [
            {
              type: "image",
              source: { type: "base64", media_type: "image/png", data: pngOfSize(2000, 1000) },
              transformations: { oversized_image: "error" },
            },
            { type: "text", text: "hi" },
          ],
        },
      ],
    },
    "messages.0.content.0.image: image dimensions 2000x1000 exceed the maximum this model observes without downsizing; the largest that fit are 1549x774",
  ],
  [
    "an output schema string format structured outputs do not take",
    {
      ...base,
      output_config: {
        format: {
          type: "json_schema",
          schema: { type: "object", properties: { a: { type: "string", format: "regex" } }, required: ["a"], additionalProperties: false },
        },
      },
      messages: [ask("hi")],
    },
    "output_config.format.schema: Invalid schema: Unsupported format 'regex'.",
  ],
  [
    "an output schema pattern with nested quantified groups",
    {
      ...base,
      output_config: {
        format: {
          type: "json_schema",
          schema: {
            type: "object",
            properties: { a: { type: "string", pattern: "^(a+)+$" } },
            required: ["a"],
            additionalProperties: false,
          },
        },
      },
      messages: [ask("hi")],
    },
    "output_config.format.schema: Unsupported regex feature in pattern field: pattern is too complex for structured output: reduce the {n,m} upper bound, narrow the character class range, or avoid nesting quantified groups",
  ],
];

describe("offline model: the Anthropic Messages API's request rules", () => {
  it.each(refusals)("refuses %s with the API's 400", async (_, body, message) => {
    const { status, body: error } = await post(body);
    expect(status).toBe(400);
    expect(error).toMatchObject({ type: "error", error: { type: "invalid_request_error", message } });
  });

  it("takes a 1h breakpoint before a 5m one, an oversized image that may be downsized, and the supported formats", async () => {
    const picture = (transformations?: unknown) => ({
      type: "image",
      source: { type: "base64", media_type: "image/png", data: pngOfSize(2000, 1000) },
      ...(transformations ? { transformations } : {}),
    });
    const allowed = [
      {
        ...base,
        system: [{ type: "text", text: "rules", cache_control: { type: "ephemeral", ttl: "1h" } }],
        messages: [{ role: "user", content: [{ type: "text", text: "hi", cache_control: { type: "ephemeral" } }] }],
      },
      { ...base, messages: [{ role: "user", content: [picture(), { type: "text", text: "hi" }] }] },
      { ...base, messages: [{ role: "user", content: [picture({ oversized_image: "downsize" }), { type: "text", text: "hi" }] }] },
      {
        ...base,
        model: "claude-opus-4-7",
        messages: [{ role: "user", content: [picture({ oversized_image: "error" }), { type: "text", text: "hi" }] }],
      },
      {
        ...base,
        output_config: {
          format: {
            type: "json_schema",
            schema: {
              type: "object",
              properties: { at: { type: "string", format: "date-time" } },
              required: ["at"],
              additionalProperties: false,
            },
          },
        },
        messages: [ask("hi")],
      },
    ];
    for (const body of allowed) expect((await post(body)).status).toBe(200);
  });

  it("caches no prefix shorter than the model's minimum (512 tokens on Opus 5, none documented for mock models)", async () => {
    const usageOf = async (model: string, repeat: number) => {
      const system = [{ type: "text", text: "Rules. ".repeat(repeat), cache_control: { type: "ephemeral" } }];
      const answer = await post({ ...base, model, system, messages: [ask("hi"), { role: "assistant", content: "ok" }, ask("more")] });
      return (answer.body as unknown as { usage: { cache_read_input_tokens: number } }).usage.cache_read_input_tokens;
    };
    expect(await usageOf("claude-opus-5", 100)).toBe(0);
    expect(await usageOf("claude-opus-5", 400)).toBeGreaterThan(512);
    expect(await usageOf("mock-1", 100)).toBeGreaterThan(0);
  });

  it("answers the SDK's BadRequestError for a rule violation", async () => {
    const { anthropic } = anthropicClient();
    const bad: MessageCreateParamsNonStreaming = { ...base, messages: [ask("hi"), call(), result()] };
    const error = await anthropic.messages.create(bad).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadRequestError);
  });

  it("accepts consecutive user messages (the API joins them into one turn) and a tool loop done right", async () => {
    expect((await post({ ...base, messages: [ask("one"), ask("two")] })).status).toBe(200);
    const loop = await post({
      ...base,
      tools,
      messages: [ask("hi"), call(), result(), { role: "assistant", content: "done" }, ask("more")],
    });
    expect(loop.status).toBe(200);
  });

  it("takes what the rules allow: max_tokens 0 (nothing generated), a prefill on a model with prefill, the limits themselves", async () => {
    const { anthropic } = anthropicClient();
    const warm = await anthropic.messages.create({ ...base, max_tokens: 0, messages: [ask("hi")] });
    expect(warm).toMatchObject({ content: [], stop_reason: "max_tokens", usage: { output_tokens: 0 } });
    const accepted = [
      { ...base, messages: [ask("hi"), { role: "assistant", content: "Sure," }] },
      {
        ...base,
        tools: [{ name: "a".repeat(128), input_schema: { type: "object" } }],
        tool_choice: { type: "auto" },
        messages: [ask("hi")],
      },
      { ...base, thinking: { type: "disabled" }, messages: [ask("hi")] },
      {
        ...base,
        messages: [ask("hi")],
        output_config: { effort: "max", format: { type: "json_schema", schema: objectOf(24, { type: "string" }) } },
      },
      {
        ...base,
        messages: [ask("hi")],
        output_config: { format: { type: "json_schema", schema: objectOf(16, { anyOf: [{ type: "string" }, { type: "null" }] }, true) } },
      },
      {
        ...base,
        tools: Array.from({ length: 20 }, (_, i) => ({
          name: `t${i}`,
          strict: true,
          input_schema: { type: "object", properties: {}, additionalProperties: false },
        })),
        messages: [ask("hi")],
      },
    ];
    for (const body of accepted) expect((await post(body)).status).toBe(200);
  });

  it("ends an answer at its first stop sequence, with stop_reason stop_sequence", async () => {
    const { anthropic } = anthropicClient();
    const answer = await anthropic.messages.create({ ...base, stop_sequences: ["there", "said"], messages: [ask("Hello there")] });
    expect(answer).toMatchObject({ stop_reason: "stop_sequence", stop_sequence: "said", content: [{ type: "text", text: "You " }] });
  });

  it("obeys tool_choice as a model does: none never calls, any and a named tool always do, one call at a time when parallel use is off", async () => {
    const { anthropic } = anthropicClient();
    const calling = { ...base, tools: [...tools, { name: "other", input_schema: { type: "object" as const } }] };
    const none = await anthropic.messages.create({ ...calling, tool_choice: { type: "none" }, messages: [ask("[[tool lookup {}]] hi")] });
    expect(none.content.map((b) => b.type)).toEqual(["text"]);
    const any = await anthropic.messages.create({ ...calling, tool_choice: { type: "any" }, messages: [ask("hi")] });
    expect(any.content.flatMap((b) => (b.type === "tool_use" ? [b.name] : []))).toEqual(["lookup"]);
    const named = await anthropic.messages.create({ ...calling, tool_choice: { type: "tool", name: "other" }, messages: [ask("hi")] });
    expect(named.content.flatMap((b) => (b.type === "tool_use" ? [b.name] : []))).toEqual(["other"]);
    const serial = await anthropic.messages.create({
      ...calling,
      tool_choice: { type: "auto", disable_parallel_tool_use: true },
      messages: [ask("[[parallel]] [[tool lookup {}]] [[tool other {}]] hi")],
    });
    expect(serial.content.flatMap((b) => (b.type === "tool_use" ? [b.name] : []))).toEqual(["lookup"]);
  });

  it("answers with a signed thinking block first when the request enables thinking", async () => {
    const { anthropic } = anthropicClient();
    const thinking = { type: "enabled" as const, budget_tokens: 1024 };
    const answer = await anthropic.messages.stream({ ...base, max_tokens: 2048, thinking, messages: [ask("hello")] }).finalMessage();
    const [first, second] = answer.content;
    expect(first).toEqual({
      type: "thinking",
      thinking: "The user wrote: hello. I will answer as instructed.",
      signature: signThinking(first?.type === "thinking" ? first.thinking : ""),
    });
    expect(second).toMatchObject({ type: "text", text: "You said: hello" });
    // Sent back unchanged, the block is accepted.
    const next = await anthropic.messages.create({
      ...base,
      max_tokens: 2048,
      thinking,
      messages: [ask("hello"), { role: "assistant", content: answer.content }, ask("again")],
    });
    expect(next.content.at(-1)).toMatchObject({ type: "text", text: "You said: again" });
  });
});
