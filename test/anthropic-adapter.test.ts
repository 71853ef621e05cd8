import type { RawMessageStreamEvent } from "@anthropic-ai/sdk/resources/messages";
import { describe, expect, it } from "vitest";
import type { Message } from "../src/core/messages";
import { signThinking } from "../src/mock-model/anthropic-thinking";
import { handleMockModel } from "../src/mock-model/index";
import { AnthropicProvider, anthropicParams } from "../src/providers/anthropic";
import { toAnthropicMessages } from "../src/providers/anthropic-messages";
import { MessageAccumulator } from "../src/providers/anthropic-stream";
import type { ModelRequest } from "../src/providers/types";
import { api, createAgent } from "./support/http";
import { anthropicClient } from "./support/mock-clients";
import { postRun, readEvents, runTurn } from "./support/runs";
import { PROVIDERS } from "./support/upstreams";

const user = (text: string): Message => ({ role: "user", content: [{ type: "text", text }] });
const TOOLS = [{ name: "lookup", parameters: { type: "object" } }];
const request = (messages: Message[], extra: Partial<ModelRequest> = {}): ModelRequest => ({
  model: "mock-1",
  messages,
  tools: [],
  max_output_tokens: 256,
  attempt: 1,
  ...extra,
});

/** An Anthropic adapter on the offline model in process, recording the bodies it sends. */
function recorded() {
  const bodies: string[] = [];
  const provider = new AnthropicProvider({
    apiKey: "sk-record",
    baseURL: "http://mock.local",
    fetch: async (input, init) => {
      const req = new Request(input, init);
      bodies.push(await req.clone().text());
      return handleMockModel(req);
    },
  });
  return { provider, bodies, sent: (i = 0) => JSON.parse(bodies[i] ?? "null") as Record<string, unknown> };
}

const toolLoop: Message[] = [
  user("[[tool lookup]] find"),
  {
    role: "assistant",
    content: [
      { type: "text", text: "\n\n" },
      { type: "tool_call", tool_call_id: "toolu_1", name: "lookup", arguments: {} },
    ],
  },
  { role: "tool", content: [{ type: "tool_result", tool_call_id: "toolu_1", output: "found", is_error: false }] },
];

describe("Anthropic adapter: requests the API accepts", () => {
  it('drops whitespace-only text blocks, so a stored "\\n\\n" never poisons a session', async () => {
    const { provider, sent } = recorded();
    const response = await provider.call(request([...toolLoop], { tools: TOOLS }), {});
    expect(response.content).toEqual([{ type: "text", text: "You said: find\nlookup returned: found" }]);
    const messages = sent().messages as { content: { type: string }[] }[];
    expect(messages[1]?.content.map((b) => b.type)).toEqual(["tool_use"]);
  });

  it('keeps a "\\n\\n" block streamed before a tool call out of the answer', async () => {
    const { provider } = recorded();
    const response = await provider.call(request([user("[[tool lookup]]")], { tools: TOOLS }), {});
    expect(response.content.map((b) => b.type)).toEqual(["tool_call"]);
  });

  it("writes tool calls and results as text when the request has no tools", async () => {
    const { provider, sent } = recorded();
    const response = await provider.call(
      request([...toolLoop, { role: "assistant", content: [{ type: "text", text: "done" }] }, user("next")]),
      {},
    );
    expect(response.content).toEqual([{ type: "text", text: "You said: next" }]);
    const body = sent();
    expect(body.tools).toBeUndefined();
    expect(JSON.stringify(body.messages)).toContain("[called tool lookup with {}]");
    expect(JSON.stringify(body.messages)).toContain("[lookup returned: found]");
  });

  it("marks the system prompt and, for a session's calls, the last message for caching", async () => {
    const params = anthropicParams(
      request([user("one"), { role: "assistant", content: [{ type: "text", text: "ok" }] }, user("two")], {
        instructions: "Be brief.",
        cache_key: "ses_1",
      }),
    );
    expect(params.system?.[0]?.cache_control).toEqual({ type: "ephemeral" });
    const last = params.messages.at(-1)?.content;
    expect(Array.isArray(last) && last.at(-1)).toMatchObject({ type: "text", text: "two", cache_control: { type: "ephemeral" } });
    const marks = JSON.stringify(params).match(/cache_control/g) ?? [];
    expect(marks).toHaveLength(2);
    // Not a session's call (a compaction summary): the system prompt only.
    expect(JSON.stringify(anthropicParams(request([user("one")], { instructions: "Be brief." }))).match(/cache_control/g)).toHaveLength(1);
  });

  it("sends the output schema in the subset Anthropic accepts, and the answer still fits the user's schema", async () => {
    const { provider, sent } = recorded();
    const schema = {
      type: "object",
      properties: {
        age: { type: "integer", minimum: 0, maximum: 150 },
        tags: { type: "array", items: { type: "string", maxLength: 5 }, minItems: 2 },
        any: {},
      },
      required: ["age", "tags"],
    };
    const response = await provider.call(request([user("report")], { output_schema: schema }), {});
    const text = response.content.map((b) => (b.type === "text" ? b.text : "")).join("");
    expect(JSON.parse(text)).toMatchObject({ age: expect.any(Number), tags: expect.any(Array) });
    const sentSchema = (sent().output_config as { format: { schema: Record<string, unknown> } }).format.schema;
    expect(sentSchema).toMatchObject({ additionalProperties: false, properties: { age: { type: "integer" }, any: { type: "string" } } });
    expect(JSON.stringify(sentSchema)).not.toMatch(/"(minimum|maximum|maxLength|minItems)"/);
  });

  it("refuses structured output on a model that predates it with a clear permanent error, before any request", async () => {
    const { provider, bodies } = recorded();
    const failure = await provider
      .call(request([user("x")], { model: "claude-3-5-haiku-20241022", output_schema: { type: "object" } }), {})
      .catch((e: unknown) => e);
    expect(failure).toMatchObject({
      type: "provider_error",
      retryable: false,
      message: expect.stringMatching(/does not support structured output/),
    });
    expect(bodies).toHaveLength(0);
  });

  it("refuses a conversation over Anthropic's 100,000 messages per request with a clear permanent error, before any request", async () => {
    const { provider, bodies } = recorded();
    const long = Array.from(
      { length: 100_001 },
      (_, i): Message => (i % 2 === 0 ? user("hi") : { role: "assistant", content: [{ type: "text", text: "ok" }] }),
    );
    const failure = await provider.call(request(long), {}).catch((e: unknown) => e);
    expect(failure).toMatchObject({
      type: "provider_error",
      retryable: false,
      message: "the conversation has 100001 messages; Anthropic takes at most 100000 in one request (enable compaction)",
    });
    expect(bodies).toHaveLength(0);
  });

  it("sends signed thinking blocks back unchanged through a tool loop (the offline model checks the signature)", async () => {
    const { anthropic } = anthropicClient();
    const thinking = { type: "enabled" as const, budget_tokens: 1024 };
    const tools = [{ name: "lookup", input_schema: { type: "object" as const } }];
    const events: RawMessageStreamEvent[] = [];
    const stream = await anthropic.messages.create({
      model: "mock-1",
      max_tokens: 2048,
      thinking,
      tools,
      stream: true,
      messages: [{ role: "user", content: "[[tool lookup]] go" }],
    });
    for await (const event of stream) events.push(event);
    const accumulator = new MessageAccumulator(
      () => {},
      () => {},
    );
    events.forEach((event) => {
      accumulator.add(event);
    });
    const answer = accumulator.result().content;
    expect(answer.map((b) => b.type)).toEqual(["reasoning", "tool_call"]);
    const call = answer[1];
    if (call?.type !== "tool_call") throw new Error("expected a tool call");
    const history: Message[] = [
      user("[[tool lookup]] go"),
      { role: "assistant", content: answer },
      { role: "tool", content: [{ type: "tool_result", tool_call_id: call.tool_call_id, output: "found", is_error: false }] },
    ];
    const final = await anthropic.messages.create({
      model: "mock-1",
      max_tokens: 2048,
      thinking,
      tools,
      messages: toAnthropicMessages(history),
    });
    expect(final.content.at(-1)).toMatchObject({ type: "text", text: "You said: go\nlookup returned: found" });
  });

  it("sends a tool loop whose assistant turn has no thinking block without thinking (Anthropic refuses it with thinking on)", async () => {
    const { anthropic } = anthropicClient();
    const thinking = { type: "adaptive" as const };
    const loop = (first: Message["content"]): Message[] => [
      user("go"),
      { role: "assistant", content: [...first, { type: "tool_call", tool_call_id: "toolu_1", name: "lookup", arguments: "{}" }] },
      { role: "tool", content: [{ type: "tool_result", tool_call_id: "toolu_1", output: "found", is_error: false }] },
    ];
    // A loop brought by a client, or begun before thinking was on: no thinking block to start it.
    const bare = anthropicParams(request(loop([]), { tools: TOOLS, settings: { thinking } }));
    expect(bare).not.toHaveProperty("thinking");
    expect(await anthropic.messages.create({ ...bare, stream: false }).then((m) => m.stop_reason)).toBe("end_turn");
    // With thinking sent, the offline model refuses it as the API does.
    const refused = await anthropic.messages.create({ ...bare, thinking, stream: false }).catch((e: unknown) => e);
    expect(refused).toMatchObject({
      status: 400,
      message: expect.stringContaining("a final `assistant` message must start with a thinking block"),
    });
    // A loop that starts with Anthropic's signed thinking keeps it.
    const signed = { type: "reasoning" as const, text: "t", provider: "anthropic", provider_data: { signature: signThinking("t") } };
    const kept = anthropicParams(request(loop([signed]), { tools: TOOLS, settings: { thinking } }));
    expect(kept).toMatchObject({ thinking });
    expect(await anthropic.messages.create({ ...kept, stream: false }).then((m) => m.stop_reason)).toBe("end_turn");
  });
});

describe("Anthropic adapter in runs", () => {
  it("reads more from the cache on every step of a tool loop", async () => {
    const agent = await createAgent({ instructions: "Be brief.", tools: [{ type: "builtin", name: "current_time" }] });
    const events = await readEvents(await postRun(agent.id, { input: "[[tool current_time]] [[tool current_time]] time?", stream: true }));
    expect(events.at(-1)?.type).toBe("run_completed");
    const reads = events
      .filter((e) => e.type === "model_request_completed")
      .map((e) => (e.data.usage as { cache_read_tokens: number }).cache_read_tokens);
    expect(reads).toHaveLength(3);
    expect(reads[0]).toBe(0);
    expect(reads[1]).toBeGreaterThan(0);
    expect(reads[2]).toBeGreaterThan(reads[1]!);
  });

  it.each(PROVIDERS)("%s: an agent PATCHed to have no tools goes on with a history that holds tool calls", async (provider) => {
    const agent = await createAgent({ provider, base_url: "mock:", tools: [{ type: "builtin", name: "current_time" }] });
    const sessionId = `no-tools-${crypto.randomUUID()}`;
    const first = await runTurn(agent.id, { input: "[[tool current_time]] now", session_id: sessionId });
    expect(first.status).toBe("completed");
    expect((await api(`/v1/agents/${agent.id}`, { method: "PATCH", body: { tools: [] } })).status).toBe(200);
    const next = await runTurn(agent.id, { input: "and now?", session_id: sessionId });
    expect(next).toMatchObject({ status: "completed", output: "You said: and now?" });
  });
});
