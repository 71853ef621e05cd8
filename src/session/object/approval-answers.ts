import { isApproval, type RequiredAction, type RunRecord } from "../../run-model/run-record";
import type { ToolResultInput } from "../../run-model/session-protocol";
import type { SessionCore } from "./session-core";

/** A decision on a call waiting for approval: a client's (with its key) or the agent's timeout. */
export type Decision = { tool_call_id: string; approve: boolean; reason?: string; source: "client" | "timeout"; key_id: string | null };

/** The tool error a denied call gives the model. */
export const deniedOutput = (reason: string | undefined) => `denied: ${reason ?? "no reason given"}`;

/** The required actions left once `answers` are recorded. */
export const remainingActions = (run: RunRecord, answers: { tool_call_id: string }[]): RequiredAction[] => {
  const answered = new Set(answers.map((a) => a.tool_call_id));
  return run.required_actions.filter((a) => !answered.has(a.tool_call_id));
};

/** The agent's `approval_timeout_seconds`, from when the run paused for approvals. */
export function armApprovalTimeout(core: SessionCore, run: RunRecord): void {
  const seconds = run.agent.approval_timeout_seconds;
  if (seconds) core.setTimer("approval", Date.now() + seconds * 1000);
}

/**
 * Records answers to a paused run's required actions in one commit (the run's status as the
 * caller set it, run-lifecycle.ts): a client tool's result in the ledger; an approved call in
 * `approved` (the loop runs it, once); a denied one as the tool error the model reads. Then the
 * timeout of what still waits for approval, and the events: `run_continued` when nothing is left,
 * each decision (`approval_decided`) and each result.
 */
export function recordAnswers(core: SessionCore, run: RunRecord, results: ToolResultInput[], decisions: Decision[]): void {
  const answered = run.required_actions.filter((a) => [...results, ...decisions].some((b) => b.tool_call_id === a.tool_call_id));
  run.required_actions = remainingActions(run, [...results, ...decisions]);
  run.metrics.tool_calls += results.length;
  run.approved = [...(run.approved ?? []), ...decisions.filter((d) => d.approve).map((d) => d.tool_call_id)];
  core.commit(() => {
    for (const result of results) {
      core.store.recordToolResult({
        tool_call_id: result.tool_call_id,
        run_id: run.id,
        output: result.output,
        is_error: result.is_error ?? false,
      });
    }
    for (const denied of decisions.filter((d) => !d.approve)) {
      core.store.recordToolResult({
        tool_call_id: denied.tool_call_id,
        run_id: run.id,
        output: deniedOutput(denied.reason),
        is_error: true,
      });
    }
    return core.saveRun(run);
  });
  if (run.required_actions.some(isApproval)) armApprovalTimeout(core, run);
  else core.setTimer("approval", null);
  if (run.required_actions.length === 0) core.emit(run, "run_continued", { from_checkpoint: null });
  for (const { tool_call_id, name } of answered) {
    const decision = decisions.find((d) => d.tool_call_id === tool_call_id);
    if (decision) {
      const { source, key_id, approve } = decision;
      core.emit(run, "approval_decided", { tool_call_id, approve, reason: decision.reason ?? null, key_id, source });
      if (!approve) core.emit(run, "tool_call_error", { tool_call_id, name, error: deniedOutput(decision.reason) });
      continue;
    }
    const result = results.find((r) => r.tool_call_id === tool_call_id);
    if (!result) continue;
    if (result.is_error) core.emit(run, "tool_call_error", { tool_call_id, name, error: result.output });
    else core.emit(run, "tool_call_completed", { tool_call_id, name, output: result.output, duration_ms: null });
  }
}
