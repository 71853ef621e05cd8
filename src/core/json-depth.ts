/**
 * Nesting bounds for JSON. V8's `JSON.parse` is iterative, but `JSON.stringify`, structured
 * clone (Durable Object RPC) and recursive validators overflow the stack on deep values, so
 * every JSON input is checked here, without recursion, before anything parses or stores it.
 */

/** The deepest nesting any JSON input may have (a request body, a model's tool arguments or answer). */
export const MAX_JSON_DEPTH = 64;

/**
 * Stored values are cut at this depth when read: inputs within MAX_JSON_DEPTH stay below it
 * even wrapped in a run record or an event; only rows stored before the bound existed exceed it.
 */
export const MAX_STORED_DEPTH = 2 * MAX_JSON_DEPTH;

/** What replaces a subtree that nests deeper than MAX_STORED_DEPTH when it is read back. */
export const PRUNED = `[removed: nested deeper than ${MAX_STORED_DEPTH} levels]`;

/** A path into a JSON value: object keys and array indices, outermost first. */
export type JsonPath = (string | number)[];

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;

type Level = { array: boolean; index: number; keyStart: number; keyEnd: number; expectKey: boolean };

/**
 * Where a JSON text first nests deeper than `maxDepth` containers (`{}` is depth 1): the path
 * of the container that opens too deep, or null when the text stays within it. One pass over
 * the characters, no recursion; invalid JSON is left for the parser to refuse.
 */
export function jsonDepthExcess(text: string, maxDepth: number = MAX_JSON_DEPTH): JsonPath | null {
  const levels: Level[] = [];
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const char = text.charCodeAt(i);
    if (char === QUOTE) {
      const start = i;
      // To the closing quote with the native search (strings are most of a stored text): a quote
      // after an odd run of backslashes is escaped. An unclosed string runs to the end.
      let end = text.indexOf('"', i + 1);
      while (end !== -1 && isEscaped(text, end)) end = text.indexOf('"', end + 1);
      i = end === -1 ? length : end;
      const level = levels[levels.length - 1];
      if (level && !level.array && level.expectKey) {
        level.keyStart = start;
        level.keyEnd = i + 1;
        level.expectKey = false;
      }
    } else if (char === OPEN_OBJECT || char === OPEN_ARRAY) {
      if (levels.length >= maxDepth) return pathOf(text, levels);
      levels.push({ array: char === OPEN_ARRAY, index: 0, keyStart: -1, keyEnd: -1, expectKey: true });
    } else if (char === CLOSE_OBJECT || char === CLOSE_ARRAY) {
      levels.pop();
    } else if (char === COMMA) {
      const level = levels[levels.length - 1];
      if (level?.array) level.index++;
      else if (level) level.expectKey = true;
    }
  }
  return null;
}

function isEscaped(text: string, quote: number): boolean {
  let backslashes = 0;
  for (let k = quote - 1; k >= 0 && text.charCodeAt(k) === BACKSLASH; k--) backslashes++;
  return backslashes % 2 === 1;
}

function pathOf(text: string, levels: Level[]): JsonPath {
  return levels.map((level) => (level.array ? level.index : keyOf(text.slice(level.keyStart, level.keyEnd))));
}

function keyOf(quoted: string): string {
  try {
    const key: unknown = JSON.parse(quoted);
    return typeof key === "string" ? key : quoted;
  } catch {
    return quoted;
  }
}

/** True when a parsed value nests deeper than `maxDepth` containers (checked without recursion). */
export function depthExceeds(value: unknown, maxDepth: number = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const [node, depth] = item;
    if (typeof node !== "object" || node === null) continue;
    if (depth > maxDepth) return true;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * A copy of `value` in which every container deeper than `maxDepth` is replaced by the text
 * PRUNED; keys keep their order. Built without recursion, so any depth can be cut.
 */
export function pruneDeep(value: unknown, maxDepth: number = MAX_STORED_DEPTH): unknown {
  const holder: Record<string, unknown> = {};
  const work: [unknown, Record<string | number, unknown>, string | number, number][] = [[value, holder, "value", 1]];
  for (let item = work.pop(); item; item = work.pop()) {
    const [node, parent, key, depth] = item;
    if (typeof node !== "object" || node === null) {
      parent[key] = node;
    } else if (depth > maxDepth) {
      parent[key] = PRUNED;
    } else if (Array.isArray(node)) {
      const copy: unknown[] = new Array<unknown>(node.length);
      parent[key] = copy;
      node.forEach((child, index) => {
        work.push([child, copy as unknown as Record<number, unknown>, index, depth + 1]);
      });
    } else {
      const copy: Record<string, unknown> = {};
      parent[key] = copy;
      for (const [name, child] of Object.entries(node)) {
        // An own property first (in order, and safe for a key named "__proto__"), filled in later.
        Object.defineProperty(copy, name, { value: undefined, enumerable: true, writable: true, configurable: true });
        work.push([child, copy, name, depth + 1]);
      }
    }
  }
  return holder.value;
}

/**
 * Parses JSON text that Agentry stored itself. A value stored before inputs were bounded may
 * nest deeper than anything can serialise again: it is read back cut at MAX_STORED_DEPTH, so
 * the row can still be shown, copied and deleted.
 */
export function parseStored<T>(text: string): T {
  const value: unknown = JSON.parse(text);
  return (jsonDepthExcess(text, MAX_STORED_DEPTH) === null ? value : pruneDeep(value, MAX_STORED_DEPTH)) as T;
}
