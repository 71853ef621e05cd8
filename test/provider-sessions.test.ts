import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { ProviderName } from "../src/providers/types";
import { api, createAgent } from "./support/http";
import { TINY_PNG } from "./support/media";
import { runTurn, type Run } from "./support/runs";

/**
 * Issue 10's proof: a long session on each adapter against the strict offline model, which
 * answers any request the real API would refuse with the vendor's 400 (and the run would end
 * in error). Every step here must complete: tools (parallel and client), an image, structured
 * output, compaction, and forks onto the two other providers and back.
 */
const MODELS: Record<ProviderName, string> = { anthropic: "claude-sonnet-4-5", openai: "gpt-5-mini", "openai-chat": "gpt-5-mini" };
const ORDER: ProviderName[] = ["anthropic", "openai", "openai-chat"];
const TRANSPORTS = {
  "in process": () => "mock:",
  loopback: (provider: ProviderName) => (provider === "anthropic" ? env.MOCK_MODEL_URL : `${env.MOCK_MODEL_URL}/v1`),
};
const TOOLS = [
  { type: "builtin", name: "current_time" },
  {
    type: "client",
    name: "ask_user",
    parameters: { type: "object", properties: { question: { type: "string" } }, required: ["question"] },
  },
];
const SCHEMA = {
  type: "object",
  properties: { answer: { type: "string" }, count: { type: "integer", minimum: 0 } },
  required: ["answer", "count"],
};

const patch = (id: string, body: Record<string, unknown>) => api(`/v1/agents/${id}`, { method: "PATCH", body });
const post = async (path: string, body: Record<string, unknown>) => (await api(path, { body })).json<Run>();

describe.each(Object.entries(TRANSPORTS))("a long session on each adapter, %s", (_transport, baseUrl) => {
  it.each(ORDER)(
    "%s: tools, a client tool, an image, structured output, compaction and forks, with no request refused",
    async (provider) => {
      const agent = await createAgent({
        provider,
        model: MODELS[provider],
        base_url: baseUrl(provider),
        tools: TOOLS,
        max_output_tokens: 2048,
      });
      const session_id = `long-${provider}-${crypto.randomUUID()}`;
      const turn = async (input: unknown, extra: Record<string, unknown> = {}) => {
        const run = await runTurn(agent.id, { input, session_id, ...extra });
        expect(run.error, JSON.stringify(run.error)).toBeNull();
        return run;
      };

      const tools = await turn("[[tool current_time {}]] [[tool current_time {}]] [[parallel]] what time is it twice");
      expect(tools.metrics).toMatchObject({ model_calls: 2, tool_calls: 2 });
      await turn("[[tool current_time {}]] and once more, one at a time");
      await turn([
        { type: "text", text: "what is in this picture?" },
        { type: "image", media_type: "image/png", data: TINY_PNG },
      ]);

      const paused = await turn('[[tool ask_user {"question":"which city?"}]] ask me');
      expect(paused.status).toBe("paused");
      const [action] = paused.required_actions;
      const resumed = await post(`/v1/agents/${agent.id}/runs/${paused.id}/continue`, {
        tool_results: [{ tool_call_id: action!.tool_call_id, output: "Paris" }],
      });
      expect(resumed).toMatchObject({ status: "completed", output: "You said: ask me\nask_user returned: Paris" });

      const structured = await turn("answer as JSON", { output_schema: SCHEMA });
      expect(structured.output).toEqual({ answer: expect.any(String), count: expect.any(Number) });
      await turn("[[words 80]] a long answer");

      const compacted = await api(`/v1/sessions/${session_id}/compact`, { method: "POST" });
      expect(compacted.status).toBe(200);
      expect((await compacted.json<{ compacted_messages: number }>()).compacted_messages).toBeGreaterThan(0);
      expect((await turn("after the summary")).output).toBe("You said: after the summary");

      // Branch from the first run's tool checkpoint onto each other provider, then come back.
      const { data: checkpoints } = await (await api(`/v1/agents/${agent.id}/runs/${tools.id}/checkpoints`)).json<{
        data: { id: string }[];
      }>();
      for (const other of [...ORDER.filter((p) => p !== provider), provider]) {
        expect((await patch(agent.id, { provider: other, model: MODELS[other], base_url: baseUrl(other) })).status).toBe(200);
        const fork = await post(`/v1/agents/${agent.id}/runs/${tools.id}/continue`, {
          continue_from: checkpoints[0]!.id,
          input: `forked onto ${other}`,
        });
        expect(fork, other).toMatchObject({ status: "completed", output: `You said: forked onto ${other}`, error: null });
        expect((await turn(`[[tool current_time {}]] on ${other} at the head`)).status).toBe("completed");
      }
    },
  );
});
