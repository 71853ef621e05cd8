import { base64ImageSize } from "./anthropic-media-rules";
import { InvalidRequest } from "./conversation";
import { asArray, isObject, type JsonObject } from "./values";

const blocksOf = (content: unknown): JsonObject[] => (typeof content === "string" ? [] : asArray(content).filter(isObject));

/**
 * The long edge and the tokens (width × height / 750) an image may have before the API scales it
 * down: 1568 px and about 1,600 tokens, and on Claude Opus 4.7 and later models 2576 px and
 * 4,784 tokens (vision docs; docs/vendor-limits.md A49).
 */
const imageCeiling = (model: string) =>
  /^(anthropic\/)?claude-(opus-4-[7-9]|opus-5|sonnet-5|haiku-5|fable|mythos)/.test(model.toLowerCase())
    ? { side: 2576, tokens: 4784 }
    : { side: 1568, tokens: 1600 };

/**
 * Block rules of API 2026-10-21 and of SDK 1.10's image transformations (docs/vendor-limits.md,
 * A4, A5, A49; the wording of each message is a guess, the docs give none):
 * a `document` only in a user message, no `citations` on a user's text, and an image that asks
 * for `transformations.oversized_image: "error"` refused when the API would have scaled it down.
 */
export function checkBlocks(model: string, messages: JsonObject[]): void {
  messages.forEach((message, index) => {
    blocksOf(message.content).forEach((block, position) => {
      const at = `messages.${index}.content.${position}`;
      if (block.type === "document" && message.role === "assistant")
        throw new InvalidRequest(`${at}: \`document\` blocks are only allowed in user messages`);
      if (block.type === "text" && message.role === "user" && asArray(block.citations).length > 0)
        throw new InvalidRequest(`${at}.text.citations: citations are not allowed in user messages`);
      if (block.type === "image" && isObject(block.transformations) && block.transformations.oversized_image === "error")
        checkOversized(model, block, at);
    });
  });
}

function checkOversized(model: string, block: JsonObject, at: string): void {
  const source = isObject(block.source) ? block.source : null;
  if (source?.type !== "base64" || typeof source.data !== "string") return;
  const size = base64ImageSize(String(source.media_type ?? ""), source.data);
  if (!size) return;
  const ceiling = imageCeiling(model);
  const scale = Math.min(
    1,
    ceiling.side / Math.max(size.width, size.height),
    Math.sqrt((ceiling.tokens * 750) / (size.width * size.height)),
  );
  if (scale >= 1) return;
  const fits = `${Math.floor(size.width * scale)}x${Math.floor(size.height * scale)}`;
  throw new InvalidRequest(
    `${at}.image: image dimensions ${size.width}x${size.height} exceed the maximum this model observes without downsizing; the largest that fit are ${fits}`,
  );
}
