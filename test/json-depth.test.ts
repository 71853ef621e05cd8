import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkOutput } from "../src/agents";
import { depthExceeds, jsonDepthExcess, parseStored, pruneDeep, PRUNED } from "../src/core/json-depth";

const deepArray = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

describe("jsonDepthExcess", () => {
  it("counts containers, not brackets inside strings or escaped quotes", () => {
    expect(jsonDepthExcess('{"a":"{{{[[[\\"{{{"}', 1)).toBeNull();
    expect(jsonDepthExcess(deepArray(3), 3)).toBeNull();
    expect(jsonDepthExcess(deepArray(4), 3)).toEqual([0, 0, 0]);
  });

  it("agrees with the parsed value's depth on values whose strings are full of quotes, backslashes and brackets", () => {
    const tricky = fc.string({ unit: fc.constantFrom("\\", '"', "{", "[", "]", "}", ",", "a") });
    const { node } = fc.letrec<{ node: unknown }>((tie) => ({
      node: fc.oneof(
        { depthSize: "small", maxDepth: 6 },
        tricky,
        fc.integer(),
        fc.array(tie("node"), { maxLength: 3 }),
        fc.dictionary(tricky, tie("node"), { maxKeys: 3 }),
      ),
    }));
    fc.assert(
      fc.property(node, fc.integer({ min: 1, max: 8 }), (value, depth) => {
        expect(jsonDepthExcess(JSON.stringify(value), depth) === null).toBe(!depthExceeds(value, depth));
      }),
      { numRuns: 2000 },
    );
  });

  it("names the path down to the container that opens too deep", () => {
    expect(jsonDepthExcess('{"ok":{},"tools":[1,{"p\\u0061rams":{"x":{}}}]}', 4)).toEqual(["tools", 1, "params", "x"]);
    expect(jsonDepthExcess('{"a":{"b":{}},"c":[[[]]]}', 3)).toEqual(["c", 0, 0]);
  });

  it("checks a million levels without overflowing the stack", () => {
    expect(jsonDepthExcess(deepArray(1_000_000))?.length).toBe(64);
  });
});

describe("pruneDeep and parseStored", () => {
  it("cuts containers below the bound and keeps key order and a __proto__ key", () => {
    const value = JSON.parse('{"b":1,"__proto__":{"x":[[1]]},"a":2}') as Record<string, unknown>;
    const pruned = pruneDeep(value, 3) as Record<string, unknown>;
    expect(Object.keys(pruned)).toEqual(["b", "__proto__", "a"]);
    expect(JSON.stringify(pruned)).toBe(`{"b":1,"__proto__":{"x":["${PRUNED}"]},"a":2}`);
    expect(Object.getPrototypeOf(pruned)).toBe(Object.prototype);
  });

  it("reads a value stored 100,000 levels deep as one that serialises again", () => {
    const value = parseStored<unknown>(deepArray(100_000));
    expect(depthExceeds(value, 128)).toBe(false);
    expect(JSON.stringify(value)).toBe(`${"[".repeat(128)}"${PRUNED}"${"]".repeat(128)}`);
    expect(parseStored<unknown>('{"a":[1,{"b":null}]}')).toEqual({ a: [1, { b: null }] });
  });
});

describe("checkOutput", () => {
  it("refuses an answer nested deeper than the bound before parsing it", () => {
    expect(checkOutput(deepArray(5_000), { type: "object" })).toEqual({
      ok: false,
      errors: [{ path: "", message: "The answer nests deeper than 64 levels." }],
    });
  });
});
