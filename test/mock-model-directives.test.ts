import { describe, expect, it } from "vitest";
import { badValue } from "../src/mock-model/bad-json";
import { parseDirectives } from "../src/mock-model/directives";
import { splitWords } from "../src/mock-model/plan";
import { sampleValue } from "../src/mock-model/sample-json";

describe("parseDirectives", () => {
  it("takes the text outside directives, whitespace collapsed", () => {
    const d = parseDirectives("  hello [[cut]]  big\n world [[slow 250]]");
    expect(d.text).toBe("hello big world");
    expect(d.cut).toBe(true);
    expect(d.slowMs).toBe(250);
    expect(d.tools).toEqual([]);
  });

  it("reads tool directives in order, with and without arguments", () => {
    const d = parseDirectives('[[tool get_weather {"city": "Paris", "n": [1, 2]}]] then [[tool current_time]] [[parallel]]');
    expect(d.tools).toEqual([
      { name: "get_weather", arguments: { city: "Paris", n: [1, 2] } },
      { name: "current_time", arguments: {} },
    ]);
    expect(d.parallel).toBe(true);
    expect(d.text).toBe("then");
  });

  it("reads fail with and without retry-after and should-retry", () => {
    expect(parseDirectives("[[fail 529 x2]]").fail).toEqual({ status: 529, times: 2, retryAfter: null, shouldRetry: null });
    expect(parseDirectives("[[fail 429 x1 retry-after=3]]").fail).toEqual({ status: 429, times: 1, retryAfter: "3", shouldRetry: null });
    expect(parseDirectives("[[fail 500 x1 retry-after=1 should-retry=false]]").fail).toEqual({
      status: 500,
      times: 1,
      retryAfter: "1",
      shouldRetry: "false",
    });
    expect(parseDirectives("[[fail 500 x1 should-retry=maybe]]").text).toBe("[[fail 500 x1 should-retry=maybe]]");
  });

  it("reads the flag directives", () => {
    const d = parseDirectives("[[quota]][[context_overflow]][[json]][[badjson]][[words 7]][[usage_limits]][[context_limit]][[tpm_limit]]");
    expect([d.quota, d.contextOverflow, d.json, d.badJson, d.words]).toEqual([true, true, true, true, 7]);
    expect([d.usageLimits, d.contextLimit, d.tpmLimit]).toEqual([true, true, true]);
    expect(d.text).toBe("");
  });

  it("reads stream errors: a vendor error frame, or a Responses error event", () => {
    expect(parseDirectives("[[stream_error overloaded_error]]").streamError).toEqual({ type: "overloaded_error", event: false });
    expect(parseDirectives("[[error_event server_error]]").streamError).toEqual({ type: "server_error", event: true });
  });

  it("keeps unknown directives and tool directives with bad JSON as text", () => {
    const d = parseDirectives("a [[nope]] b [[tool x {not json}]] [[tool y [1]]]");
    expect(d.tools).toEqual([]);
    expect(d.text).toBe("a [[nope]] b [[tool x {not json}]] [[tool y [1]]]");
  });
});

describe("splitWords", () => {
  it("keeps the spaces so the pieces concatenate to the text", () => {
    const text = "You said: hello  big\nworld";
    expect(splitWords(text)).toEqual(["You ", "said: ", "hello  ", "big\n", "world"]);
    expect(splitWords(text).join("")).toBe(text);
  });
});

const schema = {
  type: "object",
  properties: {
    name: { type: "string", minLength: 10 },
    count: { type: "integer", minimum: 3 },
    ratio: { type: "number", exclusiveMaximum: 1 },
    ok: { type: "boolean" },
    mood: { enum: ["happy", "sad"] },
    when: { type: "string", format: "date-time" },
    tags: { type: "array", items: { type: "string" } },
    nested: { type: "object", properties: { inner: { $ref: "#/$defs/Inner" } }, required: ["inner"] },
    maybe: { anyOf: [{ type: "null" }, { type: "string" }] },
  },
  required: ["name", "count"],
  $defs: { Inner: { type: "object", properties: { v: { type: "number" } } } },
};

describe("sampleValue", () => {
  it("builds a value for every property, honouring the constraints", () => {
    expect(sampleValue(schema)).toEqual({
      name: "samplexxxx",
      count: 3,
      ratio: 0.5,
      ok: true,
      mood: "happy",
      when: "2026-01-01T00:00:00Z",
      tags: ["sample"],
      nested: { inner: { v: 1 } },
      maybe: "sample",
    });
  });
});

describe("badValue", () => {
  it("leaves out the required properties and mistypes the others", () => {
    const bad = badValue(schema);
    expect(bad).not.toHaveProperty("name");
    expect(bad).not.toHaveProperty("count");
    expect(bad).toMatchObject({ ratio: "not a number", ok: 12345, mood: "__not_an_allowed_value__", tags: 12345 });
  });

  it("answers a non-object when nothing can be violated inside one", () => {
    expect(badValue({ type: "object" })).toEqual(["not", "an", "object"]);
    expect(badValue({ type: "object", additionalProperties: false })).toEqual({ unexpected_property: true });
  });
});
