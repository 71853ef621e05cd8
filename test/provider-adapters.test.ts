import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Block, Message } from "../src/core/messages";
import { signThinking } from "../src/mock-model/anthropic-thinking";
import { handleMockModel } from "../src/mock-model/index";
import { AnthropicProvider } from "../src/providers/anthropic";
import { toAnthropicMessages, toAnthropicSystem } from "../src/providers/anthropic-messages";
import { isAbortError } from "../src/providers/errors";
import { createProvider, type ProviderEnv } from "../src/providers/index";
import { OpenAIChatProvider } from "../src/providers/openai-chat";
import { toChatMessages } from "../src/providers/openai-chat-messages";
import { OpenAIResponsesProvider } from "../src/providers/openai-responses";
import { toResponsesInput } from "../src/providers/openai-responses-input";
import type { SdkClientConfig } from "../src/providers/sdk-config";
import { parseToolArguments, wireToolCallId } from "../src/providers/tool-calls";
import {
  ProviderError,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
  type ModelStreamEvent,
  type ProviderName,
} from "../src/providers/types";

const NAMES: ProviderName[] = ["anthropic", "openai", "openai-chat"];
const KEYS: ProviderEnv = { ANTHROPIC_API_KEY: "sk-ant-test-key", OPENAI_API_KEY: "sk-test-key", ALLOWED_BASE_URLS: env.MOCK_MODEL_URL };
const loopbackBase = (name: ProviderName) => (name === "anthropic" ? env.MOCK_MODEL_URL : `${env.MOCK_MODEL_URL}/v1`);

const TRANSPORTS = [
  { transport: "in process", make: (name: ProviderName) => createProvider({ provider: name, base_url: "mock:" }, {}) },
  { transport: "loopback", make: (name: ProviderName) => createProvider({ provider: name, base_url: loopbackBase(name) }, KEYS) },
];

const user = (text: string): Message => ({ role: "user", content: [{ type: "text", text }] });

function request(messages: Message[], extra: Partial<ModelRequest> = {}): ModelRequest {
  return { model: "mock-1", messages, tools: [], max_output_tokens: 256, attempt: 1, ...extra };
}

async function collect(provider: ModelProvider, req: ModelRequest, signal?: AbortSignal) {
  const events: ModelStreamEvent[] = [];
  const response = await provider.call(req, { signal, onEvent: (e) => events.push(e) });
  return {
    response,
    text: events
      .filter((e) => e.type === "text_delta")
      .map((e) => e.text)
      .join(""),
    events,
  };
}

const textOf = (response: ModelResponse) => response.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
const callsOf = (response: ModelResponse) =>
  response.content.filter((b): b is Extract<Block, { type: "tool_call" }> => b.type === "tool_call");

const TOOLS = [
  { name: "get_weather", description: "Weather of a city", parameters: { type: "object", properties: { city: { type: "string" } } } },
  { name: "get_time", parameters: { type: "object", properties: {} } },
];

/** Runs a tool loop to its final answer, answering each call with `NAME:<arguments JSON>`. */
async function toolLoop(providers: ModelProvider[], prompt: string) {
  const messages: Message[] = [user(prompt)];
  const steps: ModelResponse[] = [];
  for (let step = 0; step < 5; step++) {
    const provider = providers[Math.min(step, providers.length - 1)]!;
    const { response } = await collect(provider, request(messages, { tools: TOOLS }));
    steps.push(response);
    const calls = callsOf(response);
    if (calls.length === 0) return { steps, final: response, messages };
    messages.push({ role: "assistant", content: response.content });
    messages.push({
      role: "tool",
      content: calls.map((c) => ({
        type: "tool_result",
        tool_call_id: c.tool_call_id,
        output: `${c.name}:${JSON.stringify(c.arguments)}`,
        is_error: false,
      })),
    });
  }
  throw new Error("tool loop did not end");
}

for (const { transport, make } of TRANSPORTS) {
  describe.each(NAMES)(`%s adapter (${transport})`, (name) => {
    it("streams a plain answer whose deltas make the final text", async () => {
      const { response, text, events } = await collect(make(name), request([user("hello there")], { instructions: "Be brief." }));
      expect(textOf(response)).toBe("You said: hello there");
      expect(text).toBe("You said: hello there");
      expect(events.length).toBeGreaterThan(1);
      expect(response.stop_reason).toBe("end_turn");
      expect(response.usage.output_tokens).toBe(Math.ceil("You said: hello there".length / 4));
      expect(response.usage.input_tokens).toBeGreaterThan(0);
      expect(response.usage.cache_read_tokens).toBe(0);
      expect(response.time_to_first_token_ms).not.toBeNull();
    });

    it("runs a tool round trip", async () => {
      const { steps, final } = await toolLoop([make(name)], 'Paris please [[tool get_weather {"city":"Paris"}]]');
      const [call] = callsOf(steps[0]!);
      expect(steps[0]!.stop_reason).toBe("tool_calls");
      expect(call).toMatchObject({ name: "get_weather", arguments: { city: "Paris" } });
      expect(textOf(final)).toBe('You said: Paris please\nget_weather returned: get_weather:{"city":"Paris"}');
    });

    it("asks for parallel tool calls in one answer", async () => {
      const { steps, final } = await toolLoop([make(name)], 'go [[parallel]] [[tool get_weather {"city":"Rome"}]] [[tool get_time {}]]');
      expect(steps).toHaveLength(2);
      expect(callsOf(steps[0]!).map((c) => c.name)).toEqual(["get_weather", "get_time"]);
      expect(textOf(final)).toBe('You said: go\nget_weather returned: get_weather:{"city":"Rome"}\nget_time returned: get_time:{}');
    });

    it("fails a cut stream with a retryable error, and the next attempt answers", async () => {
      const provider = make(name);
      const cut = await provider.call(request([user("[[cut]] one two three four five six")]), {}).catch((e: unknown) => e);
      expect(cut).toBeInstanceOf(ProviderError);
      expect(cut).toMatchObject({ type: "provider_error", retryable: true, message: "stream ended before the answer was complete" });
      const { response } = await collect(provider, request([user("[[cut]] one two three")], { attempt: 2 }));
      expect(textOf(response)).toBe("You said: one two three");
    });

    it("aborts the call in flight through its signal", async () => {
      const controller = new AbortController();
      const started = Date.now();
      const seen: string[] = [];
      const pending = make(name)
        .call(request([user("[[slow 300]] a b c d e f g h i j k l m n o p")]), {
          signal: controller.signal,
          onEvent: (e) => {
            seen.push(e.text);
            controller.abort();
          },
        })
        .catch((e: unknown) => e);
      const error = await pending;
      expect(isAbortError(error)).toBe(true);
      expect(error).toMatchObject({ type: "internal", retryable: false });
      expect(seen).toHaveLength(1);
      expect(Date.now() - started).toBeLessThan(1500);
    });

    it("aborts before the first token", async () => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 50);
      const error = await make(name)
        .call(request([user("[[slow 5000]] hello")]), { signal: controller.signal })
        .catch((e: unknown) => e);
      expect(isAbortError(error)).toBe(true);
    });
  });
}

describe("histories from another provider", () => {
  const pairs = NAMES.flatMap((from) => NAMES.filter((to) => to !== from).map((to) => [from, to] as const));
  it.each(pairs)("%s tool calls are answered by %s", async (from, to) => {
    const first = createProvider({ provider: from, base_url: "mock:" }, {});
    const second = createProvider({ provider: to, base_url: "mock:" }, {});
    const { final } = await toolLoop([first, second, second], 'x [[tool get_weather {"city":"Oslo"}]] [[tool get_time {}]]');
    expect(textOf(final)).toBe('You said: x\nget_weather returned: get_weather:{"city":"Oslo"}\nget_time returned: get_time:{}');
  });

  it.each(NAMES)("%s accepts foreign ids, foreign reasoning and raw arguments", async (name) => {
    const messages: Message[] = [
      user('weather? [[tool get_weather {"city":"Lima"}]]'),
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "thinking", provider: "other", provider_data: { signature: "sig" } },
          // Anthropic checks its signatures: only one the (offline) model gave goes back.
          { type: "reasoning", text: "signed", provider: "anthropic", provider_data: { signature: signThinking("signed") } },
          { type: "reasoning", text: "summary", provider: "openai", provider_data: { id: "rs_1", summary: ["summary"] } },
          { type: "text", text: "Let me check." },
          {
            type: "tool_call",
            tool_call_id: "functions.get_weather:0/with a very long suffix that no provider accepts as is",
            name: "get_weather",
            arguments: "{not json",
          },
        ],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool_result",
            tool_call_id: "functions.get_weather:0/with a very long suffix that no provider accepts as is",
            output: "rain",
            is_error: false,
          },
        ],
      },
    ];
    const { response } = await collect(createProvider({ provider: name, base_url: "mock:" }, {}), request(messages, { tools: TOOLS }));
    expect(textOf(response)).toBe("You said: weather?\nget_weather returned: rain");
  });
});

describe("usage", () => {
  /** Builds an adapter whose SDK calls the offline model in process and records the request body. */
  function recorded(name: ProviderName) {
    const bodies: string[] = [];
    const config: SdkClientConfig = {
      apiKey: "sk-record",
      baseURL: name === "anthropic" ? "http://mock.local" : "http://mock.local/v1",
      fetch: async (input, init) => {
        const req = new Request(input, init);
        bodies.push(await req.clone().text());
        return handleMockModel(req);
      },
    };
    const provider =
      name === "anthropic"
        ? new AnthropicProvider(config)
        : name === "openai"
          ? new OpenAIResponsesProvider(config)
          : new OpenAIChatProvider(config);
    return { provider, bodies };
  }

  it.each(NAMES)("%s counts every input token, cache reads included", async (name) => {
    const { provider, bodies } = recorded(name);
    const instructions = "You are a careful assistant. ".repeat(8);
    const history: Message[] = [user("first"), { role: "assistant", content: [{ type: "text", text: "You said: first" }] }, user("second")];
    const { response } = await collect(provider, request(history, { instructions, cache_key: "ses_1" }));
    const body = bodies[0]!;
    expect(response.usage.input_tokens).toBe(Math.ceil(body.length / 4));
    expect(response.usage.output_tokens).toBe(Math.ceil("You said: second".length / 4));
    if (name !== "anthropic") {
      expect(response.usage.cache_read_tokens).toBe(Math.ceil(instructions.length / 4));
      expect(response.usage.cache_write_tokens).toBe(0);
    }
  });

  it("anthropic reads the conversation up to the last answer from the cache, and writes the rest up to its breakpoint", async () => {
    const { provider, bodies } = recorded("anthropic");
    const instructions = "You are a careful assistant. ".repeat(8);
    const history: Message[] = [user("first"), { role: "assistant", content: [{ type: "text", text: "You said: first" }] }, user("second")];
    const { response } = await collect(provider, request(history, { instructions, cache_key: "ses_1" }));
    const body = JSON.parse(bodies[0]!) as { system: unknown; messages: { content: { cache_control?: unknown }[] }[] };
    // The system prompt and the last message are the breakpoints.
    expect(body.messages.at(-1)?.content.at(-1)?.cache_control).toEqual({ type: "ephemeral" });
    const prefix = (count: number) => Math.ceil(JSON.stringify([[], body.system, body.messages.slice(0, count)]).length / 4);
    expect(response.usage.cache_read_tokens).toBe(prefix(1));
    expect(response.usage.cache_write_tokens).toBe(prefix(3) - prefix(1));
    expect(response.usage.input_tokens).toBe(Math.ceil(bodies[0]!.length / 4));
  });

  it.each(NAMES)("%s sends the attempt header on every request", async (name) => {
    const provider = createProvider({ provider: name, base_url: "mock:" }, {});
    const failed = await provider.call(request([user("[[fail 529 x1]] hi")]), {}).catch((e: unknown) => e);
    expect(failed).toMatchObject({ type: "overloaded", retryable: true });
    const { response } = await collect(provider, request([user("[[fail 529 x1]] hi")], { attempt: 2 }));
    expect(textOf(response)).toBe("You said: hi");
  });

  it.each(NAMES)("%s asks for structured output when the request has a schema", async (name) => {
    const schema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] };
    const { response } = await collect(
      createProvider({ provider: name, base_url: "mock:" }, {}),
      request([user("hi")], { output_schema: schema }),
    );
    const parsed: unknown = JSON.parse(textOf(response));
    expect(parsed).toMatchObject({ answer: expect.any(String) });
  });
});

describe("createProvider", () => {
  it("maps mock to anthropic on the offline model", async () => {
    const provider = createProvider({ provider: "mock" }, {});
    expect(provider.name).toBe("anthropic");
    const { response } = await collect(provider, request([user("hi")]));
    expect(textOf(response)).toBe("You said: hi");
  });

  it("takes the base URL from the environment when the agent has none", async () => {
    const provider = createProvider({ provider: "openai" }, { OPENAI_BASE_URL: loopbackBase("openai"), OPENAI_API_KEY: "sk-x" });
    const { response } = await collect(provider, request([user("hi")]));
    expect(textOf(response)).toBe("You said: hi");
  });

  it("lets openai-chat fall back to OPENAI_API_KEY", async () => {
    const provider = createProvider(
      { provider: "openai-chat", base_url: loopbackBase("openai-chat") },
      { OPENAI_API_KEY: "sk-x", ALLOWED_BASE_URLS: env.MOCK_MODEL_URL },
    );
    const { response } = await collect(provider, request([user("hi")]));
    expect(textOf(response)).toBe("You said: hi");
  });

  it.each([
    ["anthropic", "ANTHROPIC_API_KEY"],
    ["openai", "OPENAI_API_KEY"],
    ["openai-chat", "OPENAI_CHAT_API_KEY"],
  ] as const)("fails %s calls without a key with auth_error naming %s", async (name, secret) => {
    const provider = createProvider({ provider: name }, { ANTHROPIC_BASE_URL: "https://example.invalid" });
    const error = await provider.call(request([user("hi")]), {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ type: "auth_error", retryable: false });
    expect((error as ProviderError).message).toContain(secret);
  });

  it.each(NAMES)("never puts the %s key in an error message", async (name) => {
    const secret = "sk-mock-super-secret-value-1234567890";
    const keys: ProviderEnv = { ANTHROPIC_API_KEY: secret, OPENAI_API_KEY: secret, ALLOWED_BASE_URLS: env.MOCK_MODEL_URL };
    const provider = createProvider({ provider: name, base_url: loopbackBase(name) }, keys);
    for (const directive of ["[[fail 401 x1]]", "[[fail 400 x1]]", "[[quota]]"]) {
      const error = await provider.call(request([user(`${directive} hi`)]), {}).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as ProviderError).message).not.toContain(secret);
      expect((error as ProviderError).message).not.toContain("sk-");
    }
  });
});

describe("wire conversions", () => {
  const foreignId = "functions.get_weather:0";
  const history: Message[] = [
    user("weather?"),
    {
      role: "assistant",
      content: [
        { type: "reasoning", text: "from openai", provider: "openai", provider_data: { id: "rs_9", summary: ["from openai"] } },
        { type: "reasoning", text: "from claude", provider: "anthropic", provider_data: { signature: "sig-1" } },
        { type: "tool_call", tool_call_id: foreignId, name: "get_weather", arguments: "{bad", provider_data: { id: "fc_7" } },
        { type: "tool_call", tool_call_id: "toolu_01", name: "get_time", arguments: {}, provider_data: { id: "toolu_01" } },
      ],
    },
    {
      role: "tool",
      content: [
        { type: "tool_result", tool_call_id: foreignId, output: "rain", is_error: false },
        { type: "tool_result", tool_call_id: "toolu_01", output: "boom", is_error: true },
      ],
    },
    user("and now?"),
    { role: "assistant", content: [{ type: "reasoning", text: "only foreign", provider: "openai-chat" }] },
  ];

  it("gives Anthropic valid ids, its own thinking only, and tool results first", () => {
    const wire = toAnthropicMessages(history);
    expect(wire.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    const [, assistant, results] = wire;
    expect(assistant!.content).toEqual([
      { type: "thinking", thinking: "from claude", signature: "sig-1" },
      { type: "tool_use", id: wireToolCallId(foreignId), name: "get_weather", input: {} },
      { type: "tool_use", id: "toolu_01", name: "get_time", input: {} },
    ]);
    expect(wireToolCallId(foreignId)).toMatch(/^[a-zA-Z0-9_-]+$/);
    expect(results!.content).toEqual([
      { type: "tool_result", tool_use_id: wireToolCallId(foreignId), content: "rain" },
      { type: "tool_result", tool_use_id: "toolu_01", content: "boom", is_error: true },
      { type: "text", text: "and now?" },
    ]);
    expect(toAnthropicSystem("Be brief.")).toEqual([{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }]);
  });

  it("gives Responses call_id and no reasoning it cannot send back (nor the id of the call that followed it)", () => {
    const items = toResponsesInput(history);
    expect(items).toEqual([
      { type: "message", role: "user", content: [{ type: "input_text", text: "weather?" }] },
      { type: "function_call", call_id: wireToolCallId(foreignId), name: "get_weather", arguments: "{bad" },
      { type: "function_call", call_id: "toolu_01", name: "get_time", arguments: "{}" },
      { type: "function_call_output", call_id: wireToolCallId(foreignId), output: "rain" },
      { type: "function_call_output", call_id: "toolu_01", output: "boom" },
      { type: "message", role: "user", content: [{ type: "input_text", text: "and now?" }] },
    ]);
  });

  it("gives Chat an assistant message with tool_calls and one tool message per result", () => {
    const long = "x".repeat(60);
    const wire = toChatMessages("Be brief.", [
      ...history.slice(0, 1),
      {
        role: "assistant",
        content: [
          { type: "text", text: "checking" },
          { type: "tool_call", tool_call_id: long, name: "get_time", arguments: {} },
        ],
      },
      { role: "tool", content: [{ type: "tool_result", tool_call_id: long, output: "noon", is_error: false }] },
    ]);
    const id = wireToolCallId(long, 40);
    expect(id.length).toBeLessThanOrEqual(40);
    expect(wire).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "weather?" },
      { role: "assistant", content: "checking", tool_calls: [{ id, type: "function", function: { name: "get_time", arguments: "{}" } }] },
      { role: "tool", tool_call_id: id, content: "noon" },
    ]);
  });

  it("keeps distinct foreign ids distinct", () => {
    expect(wireToolCallId("a.b")).not.toBe(wireToolCallId("a:b"));
    expect(wireToolCallId("call_abc")).toBe("call_abc");
  });

  it.each([
    ["", {}],
    ['{"a":1}', { a: 1 }],
    ["[1]", "[1]"],
    ["{bad", "{bad"],
  ])("parses tool arguments %j as %j", (json, expected) => {
    expect(parseToolArguments(json)).toEqual(expected);
  });
});
