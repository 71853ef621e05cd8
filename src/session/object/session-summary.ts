import type { SessionView } from "../../run-model/session-protocol";
import { emptyMetrics, queuedIdsOf, type RunMetrics } from "../../run-model/run-record";
import type { SessionStore } from "../store/session-store";

/** Adds up the metrics of several runs (a session's totals). */
export function sumMetrics(all: RunMetrics[]): RunMetrics {
  const total = emptyMetrics();
  for (const m of all) {
    total.input_tokens += m.input_tokens;
    total.output_tokens += m.output_tokens;
    total.cache_read_tokens += m.cache_read_tokens;
    total.cache_write_tokens += m.cache_write_tokens;
    total.reasoning_tokens += m.reasoning_tokens;
    total.total_tokens += m.total_tokens;
    total.model_calls += m.model_calls;
    total.tool_calls += m.tool_calls;
    total.retries += m.retries;
    total.duration_ms += m.duration_ms;
    if (m.cost_usd !== null) total.cost_usd = (total.cost_usd ?? 0) + m.cost_usd;
  }
  return total;
}

/** The Session object of docs/api.md, from the object's own storage. */
export function summarizeSession(id: string, agentId: string, store: SessionStore): SessionView {
  const runs = store.listRuns();
  const head = store.headRun();
  return {
    id,
    agent_id: agentId,
    active_run_id: store.activeRun()?.id ?? null,
    queued_run_ids: queuedIdsOf(runs),
    head_run_id: head?.id ?? null,
    run_count: runs.length,
    metrics: sumMetrics(runs.map((r) => r.metrics)),
    created_at: store.getMeta("created_at") ?? "",
    updated_at: store.getMeta("updated_at") ?? "",
  };
}
