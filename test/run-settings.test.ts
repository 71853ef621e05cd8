import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, createAgent } from "./support/http";
import { requestsOf, upstreamBase } from "./support/upstreams";

type Run = { id: string; status: string; output: unknown; session_id: string };

describe("model settings on agents and runs", () => {
  it("sends a run's own settings over the agent's, and the next run goes back to the agent's", async () => {
    const bucket = crypto.randomUUID();
    const agent = await createAgent({
      provider: "openai-chat",
      model: "gpt-4.1",
      base_url: upstreamBase(env.GATEWAY_URL, bucket, "openai-chat"),
      temperature: 0.5,
    });
    expect(agent).toMatchObject({
      temperature: 0.5,
      top_p: null,
      tool_choice: "auto",
      parallel_tool_calls: true,
      reasoning: null,
      max_tool_calls: null,
    });
    const tuned = await api(`/v1/agents/${agent.id}/runs`, {
      body: { input: "Hello", temperature: 0.2, top_p: 0.8, instructions: "Be brief.", max_output_tokens: 64 },
    });
    expect(tuned.status).toBe(200);
    expect(await tuned.json<Run>()).toMatchObject({ status: "completed", output: "You said: Hello" });
    expect((await api(`/v1/agents/${agent.id}/runs`, { body: { input: "Again" } })).status).toBe(200);
    const [first, second] = await requestsOf(env.GATEWAY_URL, bucket);
    expect(first?.body).toMatchObject({
      temperature: 0.2,
      top_p: 0.8,
      max_completion_tokens: 64,
      messages: [{ role: "system", content: "Be brief." }, { role: "user" }],
    });
    expect(second?.body).toMatchObject({ temperature: 0.5, max_completion_tokens: 4096 });
    expect(second?.body).not.toHaveProperty("top_p");
  });

  it("passes a run's end user and prompt cache key to the provider in its own fields", async () => {
    for (const [provider, expected] of [
      ["anthropic", { metadata: { user_id: "user-7" } }],
      ["openai", { safety_identifier: "user-7", prompt_cache_key: "cache-7" }],
      ["openai-chat", { safety_identifier: "user-7", prompt_cache_key: "cache-7" }],
    ] as const) {
      const bucket = crypto.randomUUID();
      const agent = await createAgent({ provider, model: "m", base_url: upstreamBase(env.GATEWAY_URL, bucket, provider) });
      const response = await api(`/v1/agents/${agent.id}/runs`, { body: { input: "Hello", user: "user-7", prompt_cache_key: "cache-7" } });
      expect((await response.json<Run>()).status, provider).toBe("completed");
      const [sent] = await requestsOf(env.GATEWAY_URL, bucket);
      expect(sent?.body, provider).toMatchObject(expected);
    }
  });

  it("refuses settings the provider refuses, naming the field, and stores nothing", async () => {
    const agent = await createAgent();
    const cases: [Record<string, unknown>, string][] = [
      [{ temperature: 0.5 }, "temperature"],
      [{ tool_choice: "required" }, "tool_choice"],
      [{ tool_choice: { name: "nope" } }, "tool_choice.name"],
      [{ reasoning: { effort: "high" } }, "reasoning"],
    ];
    for (const [fields, path] of cases) {
      const response = await api(`/v1/agents/${agent.id}/runs`, { body: { input: "Hello", ...fields } });
      expect(response.status, path).toBe(400);
      const body = await response.json<{ error: { details: { fields: { path: string }[] } } }>();
      expect(
        body.error.details.fields.map((field) => field.path),
        path,
      ).toEqual([path]);
    }
    const runs = await (await api(`/v1/agents/${agent.id}/runs`)).json<{ data: unknown[] }>();
    expect(runs.data).toEqual([]);
    const refused = await api("/v1/agents", { body: { provider: "openai", model: "o3", top_p: 0.5 } });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("top_p");
  });

  it("refuses a max_output_tokens over the model's maximum (the model catalog), on the agent and per run", async () => {
    const refused = await api("/v1/agents", { body: { provider: "anthropic", model: "claude-3-haiku-20240307", max_output_tokens: 8000 } });
    expect(refused.status).toBe(400);
    expect((await refused.json<{ error: { details: { fields: unknown[] } } }>()).error.details.fields).toEqual([
      { path: "max_output_tokens", message: "is over the 4096 output tokens that model claude-3-haiku-20240307 takes" },
    ]);
    const agent = await createAgent({ provider: "openai", model: "gpt-4o", base_url: "mock:" });
    const run = await api(`/v1/agents/${agent.id}/runs`, { body: { input: "Hello", max_output_tokens: 20_000 } });
    expect(run.status).toBe(400);
    expect(await run.text()).toContain("is over the 16384 output tokens that model gpt-4o takes");
    // A model the catalog does not know (a fine-tune, a gateway's name) has only the general limits.
    expect((await api("/v1/agents", { body: { provider: "openai", model: "ft:gpt-4o:acme", max_output_tokens: 100_000 } })).status).toBe(
      201,
    );
  });

  it("thinks with Anthropic's extended thinking through a tool loop: signed thinking goes back unchanged, shown as reasoning", async () => {
    const agent = await createAgent({
      tools: [{ type: "builtin", name: "current_time" }],
      thinking: { type: "enabled", budget_tokens: 1024 },
    });
    const response = await api(`/v1/agents/${agent.id}/runs`, { body: { input: "[[tool current_time {}]] time?" } });
    const run = await response.json<Run & { metrics: { model_calls: number } }>();
    // The second call sends the first answer's signed thinking back; the offline model refuses it changed.
    expect(run).toMatchObject({ status: "completed", metrics: { model_calls: 2 } });
    expect(String(run.output)).toMatch(/^You said: time\?\ncurrent_time returned: /);
    const transcript = await (await api(`/v1/sessions/${run.session_id}/transcript`)).json<{
      data: { role: string; content: { type: string; text?: string; provider_data?: Record<string, unknown> }[] }[];
    }>();
    const reasoning = transcript.data.flatMap((m) => m.content).filter((block) => block.type === "reasoning");
    expect(reasoning).toHaveLength(2);
    expect(reasoning[0]).toMatchObject({
      text: "The user wrote: time?. I will answer as instructed.",
      provider_data: { signature: expect.any(String) },
    });
    const events = await (await api(`/v1/agents/${agent.id}/runs/${run.id}/events`)).json<{ data: { type: string }[] }>();
    expect(events.data.filter((event) => event.type === "reasoning_delta").length).toBeGreaterThan(0);
  });

  it("refuses thinking where Anthropic would, naming the field", async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ provider: "openai", model: "o3", thinking: { type: "adaptive" } }, "thinking", "provider openai takes reasoning instead"],
      [
        { provider: "mock", model: "mock-1", thinking: { type: "enabled", budget_tokens: 4096 } },
        "thinking.budget_tokens",
        "must be below max_output_tokens (4096)",
      ],
      [
        { provider: "mock", model: "mock-1", thinking: { type: "enabled", budget_tokens: 512 } },
        "thinking.budget_tokens",
        "must be at least 1024",
      ],
      [
        {
          provider: "mock",
          model: "mock-1",
          tools: [{ type: "builtin", name: "current_time" }],
          tool_choice: "required",
          thinking: { type: "enabled", budget_tokens: 1024 },
        },
        "tool_choice",
        "while thinking",
      ],
      [
        { provider: "anthropic", model: "claude-3-haiku", thinking: { type: "adaptive" } },
        "thinking",
        "model claude-3-haiku does not think",
      ],
      [
        { provider: "anthropic", model: "claude-opus-4-7", thinking: { type: "enabled", budget_tokens: 2048 } },
        "thinking.type",
        "takes only adaptive thinking",
      ],
    ];
    for (const [body, path, reason] of cases) {
      const response = await api("/v1/agents", { body });
      expect(response.status, path).toBe(400);
      const fields = (await response.json<{ error: { details: { fields: { path: string; message: string }[] } } }>()).error.details.fields;
      expect(fields.find((field) => field.path === path)?.message, path).toContain(reason);
    }
  });

  it("ends the answer at a stop sequence on Anthropic and Chat Completions, and refuses it where the API has none", async () => {
    for (const provider of ["mock", "openai-chat"]) {
      const agent = await createAgent({ provider, model: "gpt-4.1", base_url: "mock:" });
      const response = await api(`/v1/agents/${agent.id}/runs`, { body: { input: "Hello there", stop: ["there"] } });
      expect(await response.json<Run>(), provider).toMatchObject({ status: "completed", output: "You said: Hello " });
    }
    const cases: [Record<string, unknown>, string][] = [
      [{ provider: "openai", model: "gpt-4.1", stop: ["x"] }, "stop"],
      [{ provider: "openai-chat", model: "o3", stop: ["x"] }, "stop"],
      [{ provider: "mock", model: "mock-1", stop: ["a", "b", "c", "d", "e"] }, "stop"],
      [{ provider: "mock", model: "mock-1", stop: [" "] }, "stop.0"],
    ];
    for (const [body, path] of cases) {
      const refused = await api("/v1/agents", { body });
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect((await refused.json<{ error: { details: { fields: { path: string }[] } } }>()).error.details.fields[0]?.path).toBe(path);
    }
  });

  it("refuses a reasoning effort the model does not take (OpenAI's per-model efforts), on the agent and per run, storing nothing", async () => {
    const before = (await (await api("/v1/agents")).json<{ data: unknown[] }>()).data.length;
    const cases: [Record<string, unknown>, { path: string; message: string }][] = [
      [
        { provider: "openai", model: "gpt-5.1", reasoning: { effort: "minimal" } },
        { path: "reasoning.effort", message: 'is "minimal"; model gpt-5.1 takes only none, low, medium, high (OpenAI refuses others)' },
      ],
      [
        { provider: "openai-chat", model: "o3", reasoning: { effort: "none" } },
        { path: "reasoning.effort", message: 'is "none"; model o3 takes only low, medium, high (OpenAI refuses others)' },
      ],
      [
        { provider: "openai-chat", model: "gpt-5.4-pro", tools: [{ type: "builtin", name: "current_time" }] },
        {
          path: "tools",
          message:
            'need reasoning effort "none" on Chat Completions, and model gpt-5.4-pro takes only medium, high, xhigh: use provider openai',
        },
      ],
    ];
    for (const [body, field] of cases) {
      const refused = await api("/v1/agents", { body });
      expect(refused.status, field.path).toBe(400);
      expect((await refused.json<{ error: { details: { fields: unknown[] } } }>()).error.details.fields, field.path).toEqual([field]);
    }
    expect((await (await api("/v1/agents")).json<{ data: unknown[] }>()).data).toHaveLength(before);
    const agent = await createAgent({ provider: "openai", model: "gpt-5", base_url: "mock:" });
    const run = await api(`/v1/agents/${agent.id}/runs`, { body: { input: "Hello", reasoning: { effort: "none" } } });
    expect(run.status).toBe(400);
    expect((await run.json<{ error: { details: { fields: unknown[] } } }>()).error.details.fields).toEqual([
      { path: "reasoning.effort", message: 'is "none"; model gpt-5 takes only minimal, low, medium, high (OpenAI refuses others)' },
    ]);
    expect((await (await api(`/v1/agents/${agent.id}/runs`)).json<{ data: unknown[] }>()).data).toEqual([]);
    const fine = await api(`/v1/agents/${agent.id}/runs`, { body: { input: "Hello", reasoning: { effort: "minimal" } } });
    expect(await fine.json<Run>()).toMatchObject({ status: "completed", output: "You said: Hello" });
  });

  it("follows each model's tool rules: Chat Completions gpt-5.4+ gets tools without reasoning, Fable 5.1 takes no forced tool", async () => {
    const chat = await createAgent({
      provider: "openai-chat",
      model: "gpt-5.6-terra",
      base_url: "mock:",
      tools: [{ type: "builtin", name: "current_time" }],
    });
    const run = await api(`/v1/agents/${chat.id}/runs`, { body: { input: "[[tool current_time {}]] time?" } });
    expect(await run.json<Run>()).toMatchObject({ status: "completed" });
    const refusals: [Record<string, unknown>, string][] = [
      [
        {
          provider: "openai-chat",
          model: "gpt-5.6-terra",
          tools: [{ type: "builtin", name: "current_time" }],
          reasoning: { effort: "high" },
        },
        "reasoning.effort",
      ],
      [
        { provider: "anthropic", model: "claude-fable-5-1", tools: [{ type: "builtin", name: "current_time" }], tool_choice: "required" },
        "tool_choice",
      ],
    ];
    for (const [body, path] of refusals) {
      const refused = await api("/v1/agents", { body });
      expect(refused.status, path).toBe(400);
      expect(
        (await refused.json<{ error: { details: { fields: { path: string }[] } } }>()).error.details.fields.map((f) => f.path),
      ).toContain(path);
    }
  });

  it("sends no system prompt for instructions of whitespace alone (Anthropic refuses a whitespace-only system block)", async () => {
    const bucket = crypto.randomUUID();
    const agent = await createAgent({
      provider: "anthropic",
      model: "claude-test",
      base_url: upstreamBase(env.GATEWAY_URL, bucket, "anthropic"),
      instructions: " \n\t",
    });
    const response = await api(`/v1/agents/${agent.id}/runs`, { body: { input: "Hello", instructions: "  " } });
    expect(await response.json<Run>()).toMatchObject({ status: "completed", output: "You said: Hello" });
    const [sent] = await requestsOf(env.GATEWAY_URL, bucket);
    expect(sent?.body).not.toHaveProperty("system");
  });

  it("forces a tool call only until the run's first one (tool_choice required), so the model can answer", async () => {
    const agent = await createAgent({ tools: [{ type: "builtin", name: "current_time" }] });
    const response = await api(`/v1/agents/${agent.id}/runs`, { body: { input: "time?", tool_choice: "required" } });
    const run = await response.json<Run & { metrics: { model_calls: number; tool_calls: number } }>();
    expect(run).toMatchObject({ status: "completed", metrics: { model_calls: 2, tool_calls: 1 } });
  });

  it("obeys tool_choice none on the runs route: the model answers without calling", async () => {
    const agent = await createAgent({ tools: [{ type: "builtin", name: "current_time" }] });
    const response = await api(`/v1/agents/${agent.id}/runs`, { body: { input: "[[tool current_time {}]] time?", tool_choice: "none" } });
    const run = await response.json<Run & { metrics: { tool_calls: number } }>();
    expect(run).toMatchObject({ status: "completed", output: "You said: time?", metrics: { tool_calls: 0 } });
  });
});
