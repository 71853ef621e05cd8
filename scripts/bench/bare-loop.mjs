// The baseline: the agent loop written directly on `@anthropic-ai/sdk`, streamed like Agentry's
// adapter streams (messages.create with stream: true), running `current_time` in process.
import Anthropic from "@anthropic-ai/sdk";
import { now } from "./stats.mjs";

/** @import { ContentBlock, ContentBlockParam, MessageParam, StopReason, Tool } from "@anthropic-ai/sdk/resources/messages" */

/** @type {Tool[]} */
const TOOLS = [
  {
    name: "current_time",
    description: "Returns the current date and time in UTC (ISO-8601).",
    input_schema: { type: "object", properties: {} },
  },
];

/**
 * One streamed model call: the assistant content blocks and the stop reason.
 * @param {Anthropic} client
 * @param {MessageParam[]} messages
 */
async function streamOnce(client, messages) {
  const stream = await client.messages.create({ model: "claude-bench", max_tokens: 4096, messages, tools: TOOLS, stream: true });
  /** @type {ContentBlock[]} */
  const blocks = [];
  /** @type {string[]} */
  const json = [];
  /** @type {StopReason | null} */
  let stopReason = null;
  for await (const event of stream) {
    if (event.type === "content_block_start") {
      blocks[event.index] = { ...event.content_block };
      json[event.index] = "";
    } else if (event.type === "content_block_delta") {
      const block = blocks[event.index];
      if (event.delta.type === "text_delta") {
        if (block?.type === "text") block.text += event.delta.text;
      } else if (event.delta.type === "input_json_delta") json[event.index] += event.delta.partial_json;
    } else if (event.type === "message_delta") {
      stopReason = event.delta.stop_reason ?? stopReason;
    }
  }
  const content = blocks
    .map(
      /** @returns {ContentBlockParam} */
      (block, i) =>
        block.type === "tool_use"
          ? { type: "tool_use", id: block.id, name: block.name, input: json[i] ? JSON.parse(json[i]) : {} }
          : block.type === "text"
            ? { type: "text", text: block.text }
            : // Any other block (none from the offline model) goes back as the API sent it: the SDK types a
              // response block and a request block apart, hence the cast.
              /** @type {ContentBlockParam} */ (block),
    )
    // The API refuses a text block of whitespace sent back (as the offline model does): drop it, as Agentry does.
    .filter((block) => block.type !== "text" || block.text.trim() !== "");
  return { content, stopReason };
}

/**
 * A client of the fake provider with the SDK's own retries off, as Agentry configures it.
 * @param {string} baseURL
 */
export const bareClient = (baseURL) => new Anthropic({ apiKey: "sk-ant-bench", baseURL, maxRetries: 0 });

/**
 * Runs the tool loop until a final answer; returns its text, the number of model calls and the times.
 * @param {Anthropic} client
 * @param {string} input
 */
export async function bareRun(client, input, maxSteps = 25) {
  const startedAt = now();
  /** @type {MessageParam[]} */
  const messages = [{ role: "user", content: input }];
  for (let step = 1; step <= maxSteps; step += 1) {
    const { content, stopReason } = await streamOnce(client, messages);
    messages.push({ role: "assistant", content });
    const calls = content.filter((block) => block.type === "tool_use");
    if (stopReason !== "tool_use" || calls.length === 0) {
      const output = content
        .filter((block) => block.type === "text")
        .map((block) => block.text)
        .join("");
      return { startedAt, endedAt: now(), output, modelCalls: step };
    }
    messages.push({
      role: "user",
      content: calls.map((call) => ({
        type: "tool_result",
        tool_use_id: call.id,
        content: JSON.stringify({ utc: new Date().toISOString() }),
      })),
    });
  }
  throw new Error(`bare loop: no final answer after ${maxSteps} model calls`);
}
