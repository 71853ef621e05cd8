import { InvalidRequest } from "./conversation";
import { asArray, isObject, type JsonObject } from "./values";

const TTLS = ["5m", "1h"];

/**
 * Every cache breakpoint's `ttl` is `5m` or `1h` (absent: 5m), and no `1h` breakpoint comes after
 * a 5m one in the order the API reads them: tools, system, messages (docs/vendor-limits.md, A41;
 * the message of the order is observed, that of the value is pydantic's pattern).
 */
export function checkCacheTtls(body: JsonObject, messages: JsonObject[]): void {
  const marks: { path: string; ttl: unknown }[] = [];
  const visit = (blocks: unknown, path: string) => {
    asArray(blocks).forEach((block, index) => {
      if (!isObject(block)) return;
      if (isObject(block.cache_control)) marks.push({ path: `${path}.${index}`, ttl: block.cache_control.ttl });
      if (block.type === "tool_result") visit(block.content, `${path}.${index}.content`);
    });
  };
  visit(body.tools, "tools");
  visit(body.system, "system");
  messages.forEach((message, index) => {
    visit(message.content, `messages.${index}.content`);
  });
  let shortSeen = false;
  for (const { path, ttl } of marks) {
    if (ttl !== undefined && ttl !== null && !TTLS.includes(String(ttl)))
      throw new InvalidRequest(`${path}.cache_control.ttl: Input should be '5m' or '1h'`);
    if (ttl === "1h" && shortSeen)
      throw new InvalidRequest(
        `${path}.cache_control.ttl: a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block.`,
      );
    if (ttl !== "1h") shortSeen = true;
  }
}
