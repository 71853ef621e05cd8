import type { FieldError } from "../../core/errors";
import type { ApprovalInput, ToolResultInput } from "../../run-model/session-protocol";
import { isApproval, type RequiredAction } from "../../run-model/run-record";

/**
 * Checks a client's answers against a paused run's required actions: every pending action
 * answered exactly once and all at once, a client tool by a tool result and a call waiting for
 * approval by a decision; no unknown call id (docs/api.md: a missing or unknown id is 400).
 */
export function checkAnswers(required: RequiredAction[], results: ToolResultInput[], approvals: ApprovalInput[]): FieldError | null {
  return (
    checkOne(
      "tool_results",
      required.filter((a) => !isApproval(a)),
      results,
      "results",
    ) ?? checkOne("approvals", required.filter(isApproval), approvals, "decisions")
  );
}

function checkOne(field: string, required: RequiredAction[], answers: { tool_call_id: string }[], what: string): FieldError | null {
  const pending = new Set(required.map((a) => a.tool_call_id));
  const seen = new Set<string>();
  for (const [i, answer] of answers.entries()) {
    if (!pending.has(answer.tool_call_id)) {
      const kind = field === "approvals" ? "tool call waiting for approval" : "pending tool call";
      return { path: `${field}.${i}.tool_call_id`, message: `${answer.tool_call_id} is not a ${kind} of this run` };
    }
    if (seen.has(answer.tool_call_id)) return { path: `${field}.${i}.tool_call_id`, message: `${answer.tool_call_id} is answered twice` };
    seen.add(answer.tool_call_id);
  }
  const missing = [...pending].filter((id) => !seen.has(id));
  if (missing.length > 0) return { path: field, message: `missing ${what} for: ${missing.join(", ")}` };
  return null;
}
