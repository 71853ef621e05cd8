import { describe, expect, it } from "vitest";
import { agentDefinitionSchema, type Agent } from "../src/agents";
import { checkOutput, describeErrors, draftOf, MAX_OUTPUT_ERRORS, schemaProblem } from "../src/agents/output-validation";
import type { Block, Message } from "../src/core/messages";
import { handleMockModel } from "../src/mock-model/index";
import { AnthropicProvider } from "../src/providers/anthropic";
import { OpenAIChatProvider } from "../src/providers/openai-chat";
import { OpenAIResponsesProvider } from "../src/providers/openai-responses";
import { inProcessFetch, type SdkFetch } from "../src/providers/sdk-config";
import { isStrictSchema } from "../src/providers/strict-schema";
import { emptyMetrics, newRunRecord, type RunRecord } from "../src/run-model/run-record";
import { finalOutcome, holdForRepair, outputSchemaOf, repairRequest, withRepair } from "../src/session/run/structured-output";

const PERSON = {
  type: "object",
  properties: { name: { type: "string" }, age: { type: "integer" }, tags: { type: "array", items: { type: "string" } } },
  required: ["name", "age"],
  additionalProperties: false,
} as const;

const text = (t: string): Block[] => [{ type: "text", text: t }];

function runWith(schema: Record<string, unknown> | null, fields: Partial<RunRecord> = {}, maxSteps = 25): RunRecord {
  const definition = agentDefinitionSchema.parse({ provider: "mock", model: "m", max_steps: maxSteps, output_schema: schema });
  const agent: Agent = { id: "a", version: 1, created_at: "", updated_at: "", ...definition };
  return newRunRecord({
    id: "run_1",
    agent,
    session_id: "s",
    status: "running",
    input: [],
    created_at: "",
    metrics: { ...emptyMetrics(), model_calls: 1 },
    ...fields,
  });
}

describe("checkOutput", () => {
  it("parses a valid answer", () => {
    expect(checkOutput('{"name":"Ada","age":36}', PERSON)).toEqual({ ok: true, value: { name: "Ada", age: 36 } });
    expect(checkOutput('  {"name":"Ada","age":36,"tags":[]}\n', PERSON)).toMatchObject({ ok: true });
  });

  it("accepts one fenced json block, nothing else around it", () => {
    expect(checkOutput('```json\n{"name":"Ada","age":36}\n```', PERSON)).toMatchObject({ ok: true, value: { name: "Ada" } });
    expect(checkOutput('Here it is: ```json\n{"name":"Ada","age":36}\n```', PERSON)).toMatchObject({ ok: false });
  });

  it("reports text that is not JSON", () => {
    const check = checkOutput("You said: hi", PERSON);
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.errors).toHaveLength(1);
    expect(check.errors[0]).toMatchObject({ path: "", message: expect.stringMatching(/^The answer is not valid JSON/) });
  });

  it("reports each violation once, at a dotted path, without the summaries", () => {
    const check = checkOutput('{"age":"x","tags":["a",2],"extra":1}', PERSON);
    expect(check).toEqual({
      ok: false,
      errors: [
        { path: "", message: 'Instance does not have required property "name".' },
        { path: "age", message: 'Instance type "string" is invalid. Expected "integer".' },
        { path: "tags.1", message: 'Instance type "number" is invalid. Expected "string".' },
        { path: "extra", message: "This value is not allowed by the schema." },
      ],
    });
  });

  it("reports a JSON value of the wrong type", () => {
    expect(checkOutput("[1,2]", PERSON)).toEqual({
      ok: false,
      errors: [{ path: "", message: 'Instance type "array" is invalid. Expected "object".' }],
    });
  });

  it("keeps the errors of a $ref'd schema, not its summary", () => {
    const schema = { type: "object", properties: { who: { $ref: "#/$defs/person" } }, $defs: { person: PERSON } };
    const check = checkOutput('{"who":{"name":1,"age":2}}', schema);
    expect(check).toEqual({ ok: false, errors: [{ path: "who.name", message: 'Instance type "number" is invalid. Expected "string".' }] });
  });

  it("caps the errors", () => {
    const properties = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`p${i}`, { type: "string" }]));
    const value = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`p${i}`, i]));
    const check = checkOutput(JSON.stringify(value), { type: "object", properties });
    expect(check.ok ? [] : check.errors).toHaveLength(MAX_OUTPUT_ERRORS);
  });

  it("never throws: a schema the validator cannot apply is an error of the answer", () => {
    const check = checkOutput('{"a":1}', { type: "object", properties: { a: { $ref: "https://example.com/a.json" } } });
    expect(check).toMatchObject({ ok: false, errors: [{ path: "", message: expect.stringMatching(/could not be applied/) }] });
  });

  it("follows the draft named in $schema", () => {
    expect(draftOf({ $schema: "http://json-schema.org/draft-07/schema#" })).toBe("7");
    expect(draftOf({ $schema: "http://json-schema.org/draft-04/schema#" })).toBe("4");
    expect(draftOf({ $schema: "https://json-schema.org/draft/2019-09/schema" })).toBe("2019-09");
    expect(draftOf({})).toBe("2020-12");
    // draft-04's boolean exclusiveMaximum only means something in draft-04.
    const schema = {
      $schema: "http://json-schema.org/draft-04/schema#",
      type: "object",
      properties: { n: { type: "number", maximum: 5, exclusiveMaximum: true } },
    };
    expect(checkOutput('{"n":5}', schema).ok).toBe(false);
    expect(checkOutput('{"n":4}', schema).ok).toBe(true);
  });

  it("describes errors as lines", () => {
    expect(
      describeErrors([
        { path: "", message: "a" },
        { path: "x.0", message: "b" },
      ]),
    ).toBe("- (root): a\n- x.0: b");
  });
});

describe("schemaProblem", () => {
  it("accepts ordinary schemas", () => {
    expect(schemaProblem(PERSON)).toBeNull();
    expect(
      schemaProblem({ type: "object", properties: { a: { $ref: "#/$defs/a" } }, $defs: { a: { type: "string", pattern: "^\\d+$" } } }),
    ).toBeNull();
    // `pattern` as a property name or inside a value is not a regular expression.
    expect(schemaProblem({ type: "object", properties: { pattern: { type: "string" } }, default: { pattern: "((" } })).toBeNull();
  });

  it("finds invalid regular expressions and dangling local refs", () => {
    expect(schemaProblem({ type: "object", properties: { a: { type: "string", pattern: "((" } } })).toMatch(
      /pattern "\(\(" is not a valid/,
    );
    expect(schemaProblem({ type: "object", patternProperties: { "[": {} } })).toMatch(/patternProperties key/);
    expect(schemaProblem({ type: "object", properties: { a: { $ref: "#/$defs/nope" } } })).toMatch(
      /\$ref "#\/\$defs\/nope" points to nothing/,
    );
  });
});

describe("the repair decision", () => {
  const bad = text('{"age":"x"}');
  const good = text('{"name":"Ada","age":36}');

  it("uses the run's schema, else the agent's (older runs have none of their own)", () => {
    const own = { type: "object" as const, properties: {} };
    expect(outputSchemaOf(runWith(PERSON, { output_schema: own }))).toBe(own);
    expect(outputSchemaOf(runWith(PERSON, { output_schema: null }))).toBeNull();
    expect(outputSchemaOf(runWith(PERSON))).toEqual(PERSON);
    expect(outputSchemaOf(runWith(null))).toBeNull();
  });

  it("holds back an invalid final answer once, recording it on the run", () => {
    const run = runWith(PERSON);
    const errors = holdForRepair(run, bad, 7);
    expect(errors).toEqual([
      { path: "", message: 'Instance does not have required property "name".' },
      { path: "age", message: 'Instance type "string" is invalid. Expected "integer".' },
    ]);
    expect(run.output_repair).toEqual({ answer: bad, errors, next_index: 7 });
    // The repair's own answer is never held back: it is the final answer.
    expect(holdForRepair(run, bad, 7)).toBeNull();
  });

  it("does not hold back valid answers, tool calls, runs without a schema, or a run out of steps", () => {
    expect(holdForRepair(runWith(PERSON), good, 1)).toBeNull();
    const call: Block[] = [{ type: "tool_call", tool_call_id: "c", name: "t", arguments: {} }];
    expect(holdForRepair(runWith(PERSON), call, 1)).toBeNull();
    expect(holdForRepair(runWith(null), text("not json"), 1)).toBeNull();
    const last = runWith(PERSON, { metrics: { ...emptyMetrics(), model_calls: 3 } }, 3);
    expect(holdForRepair(last, bad, 1)).toBeNull();
    expect(last.output_repair).toBeUndefined();
  });

  it("sends the history, the held answer and the errors while the repair is pending", () => {
    const run = runWith(PERSON);
    const history: Message[] = [{ role: "user", content: text("[[badjson]] hi") }];
    expect(withRepair(run, history, 1)).toBe(history);
    holdForRepair(run, bad, 1);
    const messages = withRepair(run, history, 1);
    expect(messages).toEqual([
      history[0],
      { role: "assistant", content: bad },
      { role: "user", content: text(repairRequest(run.output_repair?.errors ?? [])) },
    ]);
    expect(repairRequest(run.output_repair?.errors ?? [])).toContain('- (root): Instance does not have required property "name".');
    expect(JSON.stringify(messages.at(-1))).not.toContain("[[badjson]]");
    // Once the transcript has moved on (the repair answered with a tool call), the repair is spent.
    expect(withRepair(run, history, 3)).toBe(history);
  });

  it("ends the run on its final answer", () => {
    expect(finalOutcome(runWith(null), "plain text")).toEqual({ status: "completed", patch: { output: "plain text" } });
    expect(finalOutcome(runWith(PERSON), '{"name":"Ada","age":36}')).toEqual({
      status: "completed",
      patch: { output: { name: "Ada", age: 36 } },
    });
    const repaired = runWith(PERSON);
    holdForRepair(repaired, bad, 1);
    const failed = finalOutcome(repaired, '{"age":"x"}');
    expect(failed).toMatchObject({
      status: "error",
      patch: { error: { type: "output_invalid", retryable: false, errors: [{ path: "" }, { path: "age" }] } },
    });
    expect(failed.status === "error" && failed.patch.error.message).toMatch(/after one repair attempt: \(root\): Instance does not have/);
  });
});

describe("isStrictSchema (OpenAI strict structured outputs)", () => {
  it("accepts closed objects with every property required", () => {
    const strict = {
      type: "object",
      properties: {
        name: { type: "string" },
        tags: { type: "array", items: { type: "string" } },
        kind: { anyOf: [{ type: "string" }, { type: "null" }] },
      },
      required: ["name", "tags", "kind"],
      additionalProperties: false,
    };
    expect(isStrictSchema(strict)).toBe(true);
  });

  it("refuses open objects, optional properties and unsupported keywords", () => {
    expect(isStrictSchema(PERSON)).toBe(false); // tags is optional
    expect(isStrictSchema({ type: "object", properties: { a: { type: "string" } }, required: ["a"] })).toBe(false);
    expect(isStrictSchema({ type: "object", properties: {}, additionalProperties: false, minProperties: 1 })).toBe(false);
    const nested = {
      type: "object",
      properties: { a: { type: "object", properties: { b: { type: "string" } } } },
      required: ["a"],
      additionalProperties: false,
    };
    expect(isStrictSchema(nested)).toBe(false);
    expect(
      isStrictSchema({
        type: "object",
        properties: { d: { type: "string", format: "uri" } },
        required: ["d"],
        additionalProperties: false,
      }),
    ).toBe(false);
  });

  it("refuses schemas over OpenAI's enum and string limits (1000 values; 120,000 characters; 15,000 for a string enum of over 250 values)", () => {
    const closed = (properties: Record<string, unknown>) => ({
      type: "object",
      properties,
      required: Object.keys(properties),
      additionalProperties: false,
    });
    const values = (count: number, length = 4) => Array.from({ length: count }, (_, i) => `${i}`.padStart(length, "v"));
    expect(isStrictSchema(closed({ a: { type: "string", enum: values(500) }, b: { type: "string", enum: values(500) } }))).toBe(true);
    expect(isStrictSchema(closed({ a: { type: "string", enum: values(500) }, b: { type: "string", enum: values(501) } }))).toBe(false);
    expect(isStrictSchema(closed({ a: { type: "string", enum: values(251, 59) } }))).toBe(true);
    expect(isStrictSchema(closed({ a: { type: "string", enum: values(251, 60) } }))).toBe(false);
    const names = (count: number) =>
      closed(Object.fromEntries(Array.from({ length: count }, (_, i) => [`${i}`.padStart(120, "n"), { type: "string" }])));
    expect(isStrictSchema(names(1000))).toBe(true);
    expect(isStrictSchema(names(1001))).toBe(false);
  });
});

describe("the OpenAI adapters send the schema natively", () => {
  const strict = { type: "object", properties: { a: { type: "string" } }, required: ["a"], additionalProperties: false };
  const loose = { type: "object", properties: { a: { type: "string" } } };

  function capturing(): { fetch: SdkFetch; bodies: Record<string, unknown>[] } {
    const bodies: Record<string, unknown>[] = [];
    const serve = inProcessFetch(handleMockModel);
    return {
      bodies,
      fetch: async (input, init) => {
        bodies.push(JSON.parse(String(init?.body)) as Record<string, unknown>);
        return serve(input, init);
      },
    };
  }

  const request = (schema: Record<string, unknown>) => ({
    model: "mock-1",
    messages: [{ role: "user" as const, content: text("hi") }],
    tools: [],
    max_output_tokens: 64,
    attempt: 1,
    output_schema: schema,
  });

  it("Anthropic: output_config.format json_schema", async () => {
    const { fetch, bodies } = capturing();
    const provider = new AnthropicProvider({ apiKey: "sk-x", baseURL: "http://mock.local", fetch });
    const response = await provider.call(request(strict), {});
    expect(bodies[0]?.output_config).toEqual({ format: { type: "json_schema", schema: strict } });
    expect(response.content).toEqual(text('{"a":"sample"}'));
  });

  it("Responses: text.format json_schema, strict when the schema allows it", async () => {
    const { fetch, bodies } = capturing();
    const provider = new OpenAIResponsesProvider({ apiKey: "sk-x", baseURL: "http://mock.local/v1", fetch });
    await provider.call(request(strict), {});
    await provider.call(request(loose), {});
    expect(bodies.map((b) => b.text)).toEqual([
      { format: { type: "json_schema", name: "output", schema: strict, strict: true } },
      { format: { type: "json_schema", name: "output", schema: loose, strict: false } },
    ]);
  });

  it("Chat Completions: response_format json_schema, strict when the schema allows it", async () => {
    const { fetch, bodies } = capturing();
    const provider = new OpenAIChatProvider({ apiKey: "sk-x", baseURL: "http://mock.local/v1", fetch });
    await provider.call(request(strict), {});
    await provider.call(request(loose), {});
    expect(bodies.map((b) => b.response_format)).toEqual([
      { type: "json_schema", json_schema: { name: "output", schema: strict, strict: true } },
      { type: "json_schema", json_schema: { name: "output", schema: loose, strict: false } },
    ]);
  });

  it("a closed schema over OpenAI's strict limits goes out non-strict, and the offline model (which refuses it strict) answers", async () => {
    const many = {
      type: "object",
      properties: { a: { type: "string", enum: Array.from({ length: 1001 }, (_, i) => `v${i}`) } },
      required: ["a"],
      additionalProperties: false,
    };
    const { fetch, bodies } = capturing();
    const responses = new OpenAIResponsesProvider({ apiKey: "sk-x", baseURL: "http://mock.local/v1", fetch });
    const chat = new OpenAIChatProvider({ apiKey: "sk-x", baseURL: "http://mock.local/v1", fetch });
    expect((await responses.call(request(many), {})).content).toMatchObject(text('{"a":"v0"}'));
    expect((await chat.call(request(many), {})).content).toMatchObject(text('{"a":"v0"}'));
    expect(
      bodies.map(
        (b) =>
          (b.text as { format: { strict: boolean } } | undefined)?.format.strict ??
          (b.response_format as { json_schema: { strict: boolean } }).json_schema.strict,
      ),
    ).toEqual([false, false]);
  });
});
