import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { storedEvents } from "./support/events";
import { api, createAgent } from "./support/http";
import { postRun, readEvents, runTurn, transcriptOf, type RunEvent } from "./support/runs";

const PERSON = {
  type: "object",
  properties: {
    name: { type: "string" },
    age: { type: "integer", minimum: 0 },
    tags: { type: "array", items: { type: "string" } },
  },
  required: ["name", "age"],
  additionalProperties: false,
};

/** The offline model answers `"sample"` for a string whatever its `pattern`: never valid here. */
const UNSATISFIABLE = {
  type: "object",
  properties: { code: { type: "string", pattern: "^[0-9]{4}$" } },
  required: ["code"],
};

const PROVIDERS = [{ provider: "mock" }, { provider: "openai", base_url: "mock:" }, { provider: "openai-chat", base_url: "mock:" }];

const typesOf = (events: RunEvent[]) => events.map((e) => e.type);
const ofType = (events: RunEvent[], type: string) => events.filter((e) => e.type === type);

const tableCounts = async () => {
  const rows = await env.DB.batch(["sessions", "runs", "messages"].map((t) => env.DB.prepare(`SELECT COUNT(*) AS n FROM ${t}`)));
  return rows.map((r) => (r.results[0] as { n: number }).n);
};

describe("structured output", () => {
  it.each(PROVIDERS)("[[json]] completes with the parsed object on $provider", async (fields) => {
    const agent = await createAgent({ ...fields, output_schema: PERSON });
    const run = await runTurn(agent.id, { input: "[[json]] Tell me about Ada" });
    expect(run.status).toBe("completed");
    expect(run.error).toBeNull();
    expect(run.output).toEqual({ name: "sample", age: 1, tags: ["sample"] });
    expect(run.metrics.model_calls).toBe(1);
    // Internal fields of the run record never show.
    expect(Object.keys(run)).not.toContain("output_schema");
    expect(Object.keys(run)).not.toContain("output_repair");

    const fetched = await (await api(`/v1/agents/${agent.id}/runs/${run.id}`)).json();
    expect(fetched).toEqual(run);
    const events = await storedEvents(agent.id, run.id);
    expect(ofType(events, "run_completed")[0]?.data.output).toEqual(run.output);
  });

  it.each(PROVIDERS)("[[badjson]] gets one repair, then completes with valid output on $provider", async (fields) => {
    const agent = await createAgent({ ...fields, output_schema: PERSON });
    const response = await postRun(agent.id, { input: "[[badjson]] Tell me about Ada", stream: true });
    const events = await readEvents(response);
    const run = await (await api(`/v1/agents/${agent.id}/runs/${events[0]?.run_id}`)).json<{
      status: string;
      output: unknown;
      session_id: string;
      metrics: { model_calls: number; output_tokens: number };
    }>();
    expect(run.status).toBe("completed");
    expect(run.output).toEqual({ name: "sample", age: 1, tags: ["sample"] });
    expect(run.metrics.model_calls).toBe(2);

    const types = typesOf(events);
    expect(ofType(events, "model_request_started").map((e) => e.data.step)).toEqual([1, 2]);
    expect(ofType(events, "model_request_completed").map((e) => e.data.step)).toEqual([1, 2]);
    // The repair is announced between the two calls, with the validation errors.
    const repair = ofType(events, "output_repair");
    expect(repair).toHaveLength(1);
    expect(repair[0]?.data.step).toBe(1);
    expect(repair[0]?.data.errors).toEqual(
      expect.arrayContaining([{ path: "", message: 'Instance does not have required property "name".' }]),
    );
    expect(types.indexOf("output_repair")).toBeGreaterThan(types.indexOf("model_request_completed"));
    expect(types.indexOf("output_repair")).toBeLessThan(types.lastIndexOf("model_request_started"));
    expect(types.at(-1)).toBe("run_completed");
    expect(events.at(-1)?.data.output).toEqual(run.output);
    // Both calls count: the usage of the invalid answer too.
    const usage = ofType(events, "model_request_completed").map((e) => (e.data.usage as { output_tokens: number }).output_tokens);
    expect(run.metrics.output_tokens).toBe(usage.reduce((a, b) => a + b, 0));

    // The transcript holds the user input and the repaired answer only: the next turn's history.
    const transcript = await transcriptOf(run.session_id);
    expect(transcript.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(JSON.parse(String(transcript[1]?.content[0]?.text))).toEqual(run.output);
  });

  it("ends with output_invalid and the errors when the repair is invalid too", async () => {
    const agent = await createAgent({ output_schema: UNSATISFIABLE });
    const run = await runTurn(agent.id, { input: "[[json]] Give me a code" });
    expect(run.status).toBe("error");
    expect(run.output).toBeNull();
    expect(run.error).toMatchObject({ type: "output_invalid", retryable: false });
    expect(run.error?.message).toMatch(/after one repair attempt: code: String does not match pattern/);
    expect(run.error).toMatchObject({ errors: [{ path: "code", message: "String does not match pattern." }] });
    expect(run.metrics.model_calls).toBe(2);

    const events = await storedEvents(agent.id, run.id);
    expect(ofType(events, "model_request_started")).toHaveLength(2);
    expect(ofType(events, "output_repair")).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: "run_error", data: { error: run.error } });
    // The transcript ends with the answer the run ended on.
    const transcript = await transcriptOf(run.session_id);
    expect(transcript.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(JSON.parse(String(transcript[1]?.content[0]?.text))).toEqual({ code: "sample" });
  });

  it("counts the repair against max_steps: with no call left, the invalid answer ends the run", async () => {
    const agent = await createAgent({ output_schema: PERSON, max_steps: 1 });
    const run = await runTurn(agent.id, { input: "[[badjson]] hi" });
    expect(run.status).toBe("error");
    expect(run.error?.type).toBe("output_invalid");
    expect(run.error?.message).toMatch(/max_steps \(1\) left no model call for a repair/);
    expect(run.metrics.model_calls).toBe(1);
  });

  it("lets a run's own output_schema override the agent's", async () => {
    const agent = await createAgent({ output_schema: PERSON });
    const schema = { type: "object", properties: { city: { type: "string", enum: ["Paris", "Rome"] } }, required: ["city"] };
    const run = await runTurn(agent.id, { input: "[[json]] Where?", output_schema: schema });
    expect(run.status).toBe("completed");
    expect(run.output).toEqual({ city: "Paris" });
    // The next run without one is back on the agent's; null is the same as absent.
    const next = await runTurn(agent.id, { input: "[[json]] Who?", session_id: run.session_id, output_schema: null });
    expect(next.output).toEqual({ name: "sample", age: 1, tags: ["sample"] });
  });

  it("gives a plain agent structured output for one run", async () => {
    const agent = await createAgent();
    const run = await runTurn(agent.id, {
      input: "hello",
      output_schema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] },
    });
    expect(run).toMatchObject({ status: "completed", output: { ok: true } });
    const plain = await runTurn(agent.id, { input: "hello", session_id: run.session_id });
    expect(plain.output).toBe("You said: hello");
  });

  it("answers 400 naming output_schema for a bad per-run schema, and stores nothing", async () => {
    const agent = await createAgent();
    const before = await tableCounts();
    const cases: [unknown, string][] = [
      [{ type: "array" }, "output_schema.type"],
      [{ properties: {} }, "output_schema.type"],
      ["object", "output_schema"],
      [[], "output_schema"],
      [{ type: "object", required: "name" }, "output_schema.required"],
      [{ type: "object", properties: { a: 3 } }, "output_schema.properties.a"],
      [{ type: "object", properties: { a: { type: "string", pattern: "((" } } }, "output_schema"],
      [{ type: "object", properties: { a: { $ref: "#/$defs/missing" } } }, "output_schema"],
      [{ type: "object", description: "x".repeat(300_000) }, "output_schema"],
    ];
    for (const [output_schema, path] of cases) {
      const response = await postRun(agent.id, { input: "hi", output_schema });
      expect(response.status, JSON.stringify(output_schema).slice(0, 80)).toBe(400);
      const body = await response.json<{ error: { type: string; details: { fields: { path: string }[] } } }>();
      expect(body.error.type).toBe("invalid_request");
      expect(body.error.details.fields.map((f) => f.path)).toContain(path);
    }
    expect(await tableCounts()).toEqual(before);
  });

  it("refuses a per-run schema over Anthropic's structured-output limits on an Anthropic agent, naming output_schema and the limit, and stores nothing", async () => {
    const agent = await createAgent();
    const before = await tableCounts();
    const names = Array.from({ length: 25 }, (_, i) => `p${i}`);
    const output_schema = { type: "object", properties: Object.fromEntries(names.map((name) => [name, { type: "string" }])) };
    const response = await postRun(agent.id, { input: "hi", output_schema });
    expect(response.status).toBe(400);
    const body = await response.json<{ error: { type: string; details: { fields: { path: string; message: string }[] } } }>();
    expect(body.error.type).toBe("invalid_request");
    expect(body.error.details.fields).toEqual([
      { path: "output_schema", message: "has 25 optional properties (not in required); Anthropic's structured outputs take at most 24" },
    ]);
    expect(await tableCounts()).toEqual(before);
  });

  it("validates only the final answer of a tool round trip", async () => {
    const agent = await createAgent({ output_schema: PERSON, tools: [{ type: "builtin", name: "current_time" }] });
    const run = await runTurn(agent.id, { input: "[[tool current_time {}]] [[json]] Who, and when?" });
    expect(run.status).toBe("completed");
    expect(run.output).toEqual({ name: "sample", age: 1, tags: ["sample"] });
    expect(run.metrics).toMatchObject({ model_calls: 2, tool_calls: 1 });
    const transcript = await transcriptOf(run.session_id);
    expect(transcript.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
  });

  it("repairs after a tool round trip, and the next turn's history is coherent", async () => {
    const agent = await createAgent({ output_schema: PERSON, tools: [{ type: "builtin", name: "current_time" }] });
    const run = await runTurn(agent.id, { input: "[[tool current_time {}]] [[badjson]] Who?" });
    expect(run.status).toBe("completed");
    expect(run.metrics).toMatchObject({ model_calls: 3, tool_calls: 1 });
    expect(run.output).toEqual({ name: "sample", age: 1, tags: ["sample"] });
    const transcript = await transcriptOf(run.session_id);
    expect(transcript.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);

    // A later turn sends that history and is validated on its own.
    const next = await runTurn(agent.id, { input: "[[json]] again", session_id: run.session_id });
    expect(next).toMatchObject({ status: "completed", output: { name: "sample", age: 1, tags: ["sample"] } });
    expect((await transcriptOf(run.session_id)).map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
      "user",
      "assistant",
    ]);
  });

  it("accepts an agent output_schema, refusing one the validator cannot apply", async () => {
    const created = await api("/v1/agents", { body: { provider: "mock", model: "mock-1", output_schema: PERSON } });
    expect(created.status).toBe(201);
    expect((await created.json<{ output_schema: unknown }>()).output_schema).toEqual(PERSON);
    const bad = await api("/v1/agents", {
      body: { provider: "mock", model: "mock-1", output_schema: { type: "object", properties: { a: { type: "string", pattern: "[" } } } },
    });
    expect(bad.status).toBe(400);
    const body = await bad.json<{ error: { details: { fields: { path: string; message: string }[] } } }>();
    expect(body.error.details.fields[0]).toMatchObject({
      path: "output_schema",
      message: expect.stringMatching(/not a valid regular expression/),
    });
  });
});
