import { asArray, isObject, type JsonObject } from "./values";

const tokens = (characters: number): number => Math.ceil(characters / 4);

/** How far back from a breakpoint the API looks for an earlier cache entry, in content blocks. */
const LOOKBACK_BLOCKS = 20;

const blockCount = (message: unknown): number =>
  isObject(message) ? (typeof message.content === "string" ? 1 : asArray(message.content).length) : 0;

const marked = (message: unknown): boolean =>
  isObject(message) && asArray(message.content).some((block) => isObject(block) && isObject(block.cache_control));

/**
 * The shortest prefix, in tokens, that a model caches; a shorter one is neither written nor read,
 * without an error (docs/vendor-limits.md, A42). Models the docs give no figure for (the 5.5
 * family, unknown names) cache any length.
 */
const MIN_CACHED: [RegExp, number][] = [
  [/claude-(opus-5|fable-5|mythos-5)(?!-5)/, 512],
  [/claude-(haiku-4-5|opus-4-5|opus-4-6|opus-4-7)/, 4096],
  [/claude-(3-haiku|3-5-haiku|haiku-3)/, 2048],
  [/claude-(sonnet-5(?!-5)|opus-4-8|sonnet-4|opus-4)/, 1024],
];

export const minCachedTokens = (model: string): number => MIN_CACHED.find(([pattern]) => pattern.test(model))?.[1] ?? 0;

/**
 * Anthropic prompt caching, deterministic and without memory. The transcript stands for the
 * conversation's earlier requests: the one that produced the last assistant message ended just
 * before it and, marked the same way, wrote the prefix up to there. So a request with a
 * breakpoint on a message at or after that point (within 20 blocks of it) reads that prefix
 * (tools, system and the messages before the last assistant message) from the cache; without a
 * message breakpoint, a marked system prompt is read once an assistant message exists (docs/api.md).
 * What lies between the read prefix and the request's last breakpoint is written.
 * Tokens of a prefix: ceil(characters of the JSON of `[tools, system, messages]` / 4). A prefix
 * shorter than the model's minimum (minCachedTokens) is not cached at all.
 */
export function anthropicCacheUsage(body: JsonObject, systemText: string, systemMarked: boolean, input: number) {
  const messages = asArray(body.messages);
  const prefix = (count: number) => tokens(JSON.stringify([body.tools ?? [], body.system ?? [], messages.slice(0, count)]).length);
  const breakpoint = messages.findLastIndex(marked);
  const assistant = messages.findLastIndex((m) => isObject(m) && m.role === "assistant");
  let read = 0;
  const between = messages.slice(assistant, breakpoint + 1).reduce<number>((n, m) => n + blockCount(m), 0);
  if (breakpoint >= 0 && assistant > 0 && assistant <= breakpoint && between <= LOOKBACK_BLOCKS) read = prefix(assistant);
  else if (systemMarked && assistant >= 0) read = tokens(systemText.length);
  read = Math.min(read, input);
  let written = 0;
  if (breakpoint >= 0) written = prefix(breakpoint + 1) - read;
  else if (systemMarked && read === 0) written = tokens(systemText.length);
  written = Math.max(0, Math.min(written, input - read));
  const cached = breakpoint >= 0 ? prefix(breakpoint + 1) : systemMarked ? tokens(systemText.length) : 0;
  if (cached < minCachedTokens(String(body.model ?? ""))) return { read: 0, written: 0 };
  return { read, written };
}
