import { describe, expect, it } from "vitest";
import { serverToolItems } from "../src/api/openai-responses/tool-items";
import type { RunEvent } from "../src/session";

let seq = 0;
const event = (type: string, data: Record<string, unknown> = {}): RunEvent =>
  ({ seq: ++seq, type, run_id: "run_a", session_id: "ses_a", created_at: "2026-12-03T00:00:00.000Z", data }) as RunEvent;

describe("a stretch's output items before its answer", () => {
  it("keeps a step's text before its tool calls as a message item, drops a voided attempt's text and whitespace", () => {
    const { items } = serverToolItems([
      event("run_started"),
      event("model_request_started"),
      event("content_delta", { text: "I will guess" }),
      event("retry", { step: 1 }),
      event("model_request_started"),
      event("content_delta", { text: "Let me " }),
      event("content_delta", { text: "check the time." }),
      event("tool_call_started", { tool_call_id: "call_1", name: "current_time", arguments: {} }),
      event("tool_call_completed", { tool_call_id: "call_1", output: { utc: "now" } }),
      event("model_request_started"),
      event("content_delta", { text: "\n\n" }),
      event("tool_call_started", { tool_call_id: "call_2", name: "current_time", arguments: {} }),
      event("tool_call_completed", { tool_call_id: "call_2", output: { utc: "later" } }),
      event("model_request_started"),
      event("content_delta", { text: "The answer." }),
    ]);
    expect(items.map((item) => [item.type, item.type === "message" ? item.content[0]!.text : item.call_id])).toEqual([
      ["message", "Let me check the time."],
      ["function_call", "call_1"],
      ["function_call_output", "call_1"],
      ["function_call", "call_2"],
      ["function_call_output", "call_2"],
    ]);
  });
});
