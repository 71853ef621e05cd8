/** Narrowing helpers for request bodies parsed from untrusted JSON. */

export type JsonObject = { [key: string]: unknown };

export const isObject = (value: unknown): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value);

export const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

export const asString = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

/** The text of a string or of the `text` blocks of a content array (other blocks are skipped). */
export function textOf(content: unknown, blockTypes: readonly string[]): string {
  if (typeof content === "string") return content;
  return asArray(content)
    .filter(isObject)
    .filter((block) => typeof block.type === "string" && blockTypes.includes(block.type))
    .map((block) => asString(block.text) ?? "")
    .join("");
}

/** Parses JSON without trusting its shape: `undefined` when the text is not JSON. */
export function parseJson(text: string): unknown {
  try {
    const value: unknown = JSON.parse(text);
    return value;
  } catch {
    return undefined;
  }
}
