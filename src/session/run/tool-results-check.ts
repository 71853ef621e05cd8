import type { FieldError } from "../../core/errors";
import type { ToolResultInput } from "../../run-model/session-protocol";
import type { RequiredAction } from "../../run-model/run-record";

/**
 * Checks a client's results against a paused run's required actions: each pending call
 * answered exactly once, no unknown call id (docs/api.md: a missing or unknown id is 400).
 */
export function checkToolResults(required: RequiredAction[], results: ToolResultInput[]): FieldError | null {
  const pending = new Set(required.map((a) => a.tool_call_id));
  const seen = new Set<string>();
  for (const [i, result] of results.entries()) {
    if (!pending.has(result.tool_call_id)) {
      return { path: `tool_results.${i}.tool_call_id`, message: `${result.tool_call_id} is not a pending tool call of this run` };
    }
    if (seen.has(result.tool_call_id)) {
      return { path: `tool_results.${i}.tool_call_id`, message: `${result.tool_call_id} is answered twice` };
    }
    seen.add(result.tool_call_id);
  }
  const missing = [...pending].filter((id) => !seen.has(id));
  if (missing.length > 0) return { path: "tool_results", message: `missing results for: ${missing.join(", ")}` };
  return null;
}
