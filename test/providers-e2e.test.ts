import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createAgent } from "./support/http";
import { postRun, readEvents, runTurn, transcriptOf } from "./support/runs";

const providers = ["anthropic", "openai", "openai-chat"] as const;
/** The offline model in process (`mock:`) and over loopback HTTP, where the SDK really connects. */
const routes = {
  "in process": () => "mock:",
  loopback: (provider: string) => (provider === "anthropic" ? env.MOCK_MODEL_URL : `${env.MOCK_MODEL_URL}/v1`),
};

describe.each(Object.entries(routes))("the agent loop on each provider, %s", (_route, baseUrl) => {
  it.each(providers)("%s: a tool round trip through the real SDK", async (provider) => {
    const agent = await createAgent({
      provider,
      model: "mock-1",
      base_url: baseUrl(provider),
      tools: [{ type: "builtin", name: "current_time" }],
    });
    const events = await readEvents(await postRun(agent.id, { input: "[[tool current_time {}]] what time is it?", stream: true }));
    const types = events.map((e) => e.type);
    expect(types).toEqual(
      expect.arrayContaining([
        "run_started",
        "model_request_started",
        "content_delta",
        "tool_call_started",
        "tool_call_completed",
        "model_request_completed",
      ]),
    );
    const done = events.at(-1);
    expect(done?.type).toBe("run_completed");
    expect(String(done?.data.output)).toMatch(/^You said: what time is it\?\ncurrent_time returned: \{"utc":"/);
    const started = events.filter((e) => e.type === "model_request_started").map((e) => e.data);
    expect(started).toEqual([
      { step: 1, attempt: 1, provider, model: "mock-1" },
      { step: 2, attempt: 1, provider, model: "mock-1" },
    ]);
    const usage = events.filter((e) => e.type === "model_request_completed").map((e) => e.data.usage as { input_tokens: number });
    expect(usage).toHaveLength(2);
    expect(usage[1]!.input_tokens).toBeGreaterThan(usage[0]!.input_tokens);
    const transcript = await transcriptOf(events[0]!.session_id);
    expect(transcript.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(transcript[1]?.content.find((b) => b.type === "tool_call")).toMatchObject({ name: "current_time", arguments: {} });
  });
});

describe("provider configuration", () => {
  it("never lets a provider key reach a run, an event or a transcript", async () => {
    for (const provider of providers) {
      const agent = await createAgent({ provider, base_url: routes.loopback(provider) });
      const response = await postRun(agent.id, { input: "[[fail 401 x1]] who am I?", stream: true });
      const body = await response.text();
      expect(body).toContain("run_error");
      const events = await readEvents(new Response(body));
      expect(events.at(-1)?.data.error).toMatchObject({ type: "auth_error", retryable: false });
      const transcript = JSON.stringify(await transcriptOf(events[0]!.session_id));
      for (const secret of [env.ANTHROPIC_API_KEY, env.OPENAI_API_KEY, env.ADMIN_TOKEN, env.WEBHOOK_SECRET]) {
        expect(body).not.toContain(secret);
        expect(transcript).not.toContain(secret);
      }
    }
  });

  it("reports usage with cache reads once the system prompt is cached", async () => {
    const agent = await createAgent({ instructions: "You are a careful assistant. ".repeat(20) });
    const sessionId = `cache-${crypto.randomUUID()}`;
    const first = await runTurn(agent.id, { input: "one", session_id: sessionId });
    const second = await runTurn(agent.id, { input: "two", session_id: sessionId });
    expect(first.metrics.cache_read_tokens).toBe(0);
    // The second turn reads the system prompt and the first turn's input (the prefix the first call wrote).
    expect(second.metrics.cache_read_tokens).toBeGreaterThan(Math.ceil("You are a careful assistant. ".repeat(20).length / 4));
    expect(second.metrics.cache_read_tokens).toBeLessThanOrEqual(first.metrics.input_tokens);
    expect(second.metrics.input_tokens).toBeGreaterThan(second.metrics.cache_read_tokens);
  });
});
