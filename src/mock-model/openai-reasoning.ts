import type { Answer } from "./wire";
import { randomId } from "./ids";
import { asArray, isObject, parseJson, type JsonObject } from "./values";

/** A `reasoning` output item as OpenAI's reasoning models return it. */
export type ReasoningItem = {
  id: string;
  type: "reasoning";
  summary: { type: "summary_text"; text: string }[];
  encrypted_content?: string;
};

/** What the offline model seals into `encrypted_content`: the item and the item that followed it. */
type Sealed = { id: string; next: string };

// Real encrypted content is a Fernet token (it starts `gAAAAA`); ours is readable, but only we make it.
const SEAL_PREFIX = "gAAAAAB";

/** The offline model's `encrypted_content` of a reasoning item followed by the item `next`. */
export const seal = (sealed: Sealed): string => SEAL_PREFIX + btoa(JSON.stringify(sealed));

/** What `seal` put in `encrypted_content`, or null when the offline model did not make it. */
export function unseal(content: string): Sealed | null {
  if (!content.startsWith(SEAL_PREFIX)) return null;
  let decoded: unknown;
  try {
    decoded = parseJson(atob(content.slice(SEAL_PREFIX.length)));
  } catch {
    return null;
  }
  return isObject(decoded) && typeof decoded.id === "string" && typeof decoded.next === "string"
    ? { id: decoded.id, next: decoded.next }
    : null;
}

/** The model's thinking before an answer: what a summary shows and reasoning tokens count. */
export function thoughtOf(answer: Answer): string {
  if (answer.kind === "tools") {
    return `**Choosing tools**\n\nTo answer I need ${answer.calls.map((call) => call.name).join(" and ")}.`;
  }
  return "**Answering**\n\nI have what I need, so I answer directly.";
}

/**
 * The reasoning item before the answer's first item `nextId`: a summary only when the request
 * asks for one (`reasoning.summary`), the encrypted content only when it includes
 * `reasoning.encrypted_content`.
 */
export function reasoningItem(raw: JsonObject, thought: string, nextId: string): ReasoningItem {
  const id = randomId("rs_", 32);
  const summarized = isObject(raw.reasoning) && typeof raw.reasoning.summary === "string";
  const encrypted = asArray(raw.include).includes("reasoning.encrypted_content");
  return {
    id,
    type: "reasoning",
    summary: summarized ? [{ type: "summary_text", text: thought }] : [],
    ...(encrypted ? { encrypted_content: seal({ id, next: nextId }) } : {}),
  };
}
