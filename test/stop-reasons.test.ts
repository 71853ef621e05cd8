import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { REFUSAL_TEXT } from "../src/mock-model/plan";
import { api, createAgent } from "./support/http";
import { postRun, readEvents, runTurn, transcriptOf, type Run, type RunEvent } from "./support/runs";
import { callsReceived } from "./support/tool-server";

/**
 * Stop reasons (docs/api.md, The Run object; docs/providers.md, Stop reasons): an answer cut at the
 * model's output limit or declined ends the run with an error and its partial text, on every
 * adapter, in process and over loopback HTTP through the real SDKs.
 */

const providers = ["anthropic", "openai", "openai-chat"] as const;
const routes = {
  "in process": () => "mock:",
  loopback: (provider: string) => (provider === "anthropic" ? env.MOCK_MODEL_URL : `${env.MOCK_MODEL_URL}/v1`),
};

type RecordedCall = { body: { tool_call_id: string; name: string } };

/** Streams a turn; returns its events and the Run as stored once it ended. */
async function streamTurn(agentId: string, body: Record<string, unknown>): Promise<{ events: RunEvent[]; run: Run }> {
  const events = await readEvents(await postRun(agentId, { ...body, stream: true }));
  const response = await api(`/v1/agents/${agentId}/runs/${events[0]!.run_id}`);
  return { events, run: await response.json<Run>() };
}

describe.each(Object.entries(routes))("stop reasons, %s", (_route, baseUrl) => {
  it.each(providers)("%s: an answer cut at max_output_tokens ends with output_truncated and its partial text", async (provider) => {
    const agent = await createAgent({ provider, base_url: baseUrl(provider) });
    const { events, run } = await streamTurn(agent.id, { input: "[[truncate 3]] one two three four" });
    expect(run.status).toBe("error");
    expect(run.error).toMatchObject({ type: "output_truncated", retryable: false });
    expect(run.error?.message).toMatch(/max_output_tokens \(4096\)/);
    expect(run.output).toBe("You said: one ");
    expect(events.at(-1)).toMatchObject({ type: "run_error", data: { error: { type: "output_truncated", retryable: false } } });
    expect(
      events
        .filter((e) => e.type === "content_delta")
        .map((e) => e.data.text)
        .join(""),
    ).toBe("You said: one ");
    expect(run.metrics.model_calls).toBe(1);
    expect(run.metrics.output_tokens).toBeGreaterThan(0);
  });

  it.each(providers)(
    "%s: a tool call cut mid-arguments is never executed; the transcript stays valid for the next turn",
    async (provider) => {
      const bucket = crypto.randomUUID();
      const agent = await createAgent({
        provider,
        base_url: baseUrl(provider),
        tools: [
          {
            type: "webhook",
            name: "get_weather",
            parameters: { type: "object", properties: { city: { type: "string" } } },
            url: `${env.TOOL_SERVER_URL}/echo/${bucket}`,
          },
        ],
      });
      const sessionId = `cut-${crypto.randomUUID()}`;
      const { events, run } = await streamTurn(agent.id, {
        input: '[[truncate]] [[tool get_weather {"city":"Paris"}]] weather?',
        session_id: sessionId,
      });
      expect(run.status).toBe("error");
      expect(run.error).toMatchObject({ type: "output_truncated", retryable: false });
      expect(run.error?.message).toMatch(/no tool call of it was executed/);
      expect(run.output).toBe("");
      expect(run.metrics.tool_calls).toBe(0);
      expect(events.map((e) => e.type)).not.toContain("tool_call_started");
      expect(events.at(-1)).toMatchObject({ type: "run_error", data: { error: { type: "output_truncated" } } });
      expect(await callsReceived<RecordedCall>(bucket)).toHaveLength(0);
      const transcript = await transcriptOf(sessionId);
      expect(transcript.map((m) => m.role)).toEqual(["user", "assistant"]);
      expect(transcript[1]?.content.some((b) => b.type === "tool_call")).toBe(false);

      const next = await runTurn(agent.id, { input: "and now?", session_id: sessionId });
      expect(next.status).toBe("completed");
      expect(next.output).toBe("You said: and now?");
      expect(await callsReceived<RecordedCall>(bucket)).toHaveLength(0);
    },
  );

  it.each(providers)("%s: a refusal ends the run with refused and what the model said", async (provider) => {
    const agent = await createAgent({ provider, base_url: baseUrl(provider) });
    const sessionId = `refuse-${crypto.randomUUID()}`;
    const { events, run } = await streamTurn(agent.id, { input: "[[refuse]] one two three four", session_id: sessionId });
    expect(run.status).toBe("error");
    expect(run.error).toMatchObject({ type: "refused", retryable: false });
    expect(run.error?.message).toMatch(/^The model declined to answer/);
    // Anthropic stops mid-answer and adds nothing; OpenAI models answer with a refusal message.
    expect(run.output).toBe(provider === "anthropic" ? "You said: one " : REFUSAL_TEXT);
    expect(events.at(-1)).toMatchObject({ type: "run_error", data: { error: { type: "refused", retryable: false } } });
    const next = await runTurn(agent.id, { input: "something else", session_id: sessionId });
    expect(next).toMatchObject({ status: "completed", output: "You said: something else" });
  });

  it.each(providers)("%s: a structured answer cut at max_output_tokens is output_truncated, never repaired", async (provider) => {
    const agent = await createAgent({
      provider,
      base_url: baseUrl(provider),
      output_schema: { type: "object", properties: { city: { type: "string" }, days: { type: "integer" } }, required: ["city", "days"] },
    });
    const { events, run } = await streamTurn(agent.id, { input: "[[truncate]] the forecast" });
    expect(run.status).toBe("error");
    expect(run.error).toMatchObject({ type: "output_truncated", retryable: false });
    expect(typeof run.output).toBe("string");
    expect(String(run.output).length).toBeGreaterThan(0);
    expect(() => JSON.parse(String(run.output))).toThrow();
    expect(run.metrics.model_calls).toBe(1);
    expect(events.map((e) => e.type)).not.toContain("output_repair");
    expect(events.at(-1)).toMatchObject({ type: "run_error", data: { error: { type: "output_truncated" } } });
  });
});
