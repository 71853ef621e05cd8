import { AsyncLocalStorage } from "node:async_hooks";

/** Structured log lines. Never put a secret, a prompt or a tool output in one. */
export type LogEvent =
  | { event: "unhandled_error"; message: string; error_type?: string }
  | { event: "run_started"; run_id: string; trigger: string }
  | { event: "run_finished"; run_id: string; status: string; duration_ms: number; error_type?: string }
  | { event: "run_resumed"; run_id: string; reason: string }
  | { event: "queue_message"; run_id: string | null; outcome: string }
  | { event: "sweep"; stale_runs: number; events_deleted: number }
  | { event: "outbox_failed"; session_id: string; message: string; statements?: number; d1?: "unreachable"; rejected?: number }
  | { event: "outbox_quarantined"; session_id: string; statements: number; message: string }
  | { event: "alarm_failed"; message: string }
  | { event: "session_rebuilt"; session_id: string; messages: number; runs: number }
  | { event: "media_missing"; session_id: string; media_id: string }
  | { event: "media_kept"; session_id: string; run_id: string; objects: number; reason: string }
  /** An event of a run whose stretch had ended (its terminal event was out) was not emitted. */
  | { event: "late_event_dropped"; run_id: string; type: string }
  /** A delete that an evicted or failed instance left half done was finished (or failed again) on the next entry. */
  | { event: "session_delete_resumed"; session_id: string }
  | { event: "session_delete_failed"; session_id: string; message: string }
  /** A run record read back from storage or D1 failed its schema (run-record-schema.ts). */
  | { event: "corrupt_run_record"; run_id: string; where: string; fields: string[] }
  /** One attempt of a webhook delivery (src/webhooks): never its URL's query, body or secret. */
  | { event: "webhook_attempt"; delivery_id: string; webhook_id: string; attempt: number; outcome: string; status_code: number | null }
  /** A webhook delivery could not be put on its queue (the Cron sweep sends it later). */
  | { event: "webhook_enqueue_failed"; delivery_ids: string[]; message: string }
  /** A session object could not reach its tenant's spend ledger: the call went on, its reports are sent with the next ones. */
  | { event: "ledger_unreachable"; reports: number; message: string }
  /** An MCP server's tool was not offered to the model (docs/mcp.md, Limits). */
  | { event: "mcp_tool_skipped"; server_label: string; tool: string; reason: string };

export type LogLevel = "debug" | "info" | "warn" | "error";

/** What a line is about, where known: added to every line logged inside `withLogContext`. */
export type LogContext = {
  request_id?: string;
  tenant?: string;
  agent_id?: string;
  session_id?: string;
  run_id?: string;
};

const LEVELS: Record<LogEvent["event"], LogLevel> = {
  unhandled_error: "error",
  run_started: "info",
  run_finished: "info",
  run_resumed: "warn",
  mcp_tool_skipped: "warn",
  queue_message: "warn",
  sweep: "info",
  outbox_failed: "warn",
  outbox_quarantined: "error",
  alarm_failed: "error",
  session_rebuilt: "info",
  media_missing: "warn",
  media_kept: "warn",
  late_event_dropped: "debug",
  session_delete_resumed: "warn",
  session_delete_failed: "error",
  corrupt_run_record: "error",
  webhook_attempt: "info",
  webhook_enqueue_failed: "warn",
  ledger_unreachable: "error",
};

const context = new AsyncLocalStorage<LogContext>();

/** Runs `fn` with `fields` (over the enclosing context) on every line it logs, awaited work included. */
export function withLogContext<T>(fields: LogContext, fn: () => T): T {
  return context.run({ ...context.getStore(), ...fields }, fn);
}

/** Adds what became known (the tenant once authenticated, a session or run id) to the current context. */
export function addLogContext(fields: LogContext): void {
  const store = context.getStore();
  if (store) Object.assign(store, fields);
}

/** The current request's id, if this code runs for one. */
export const currentRequestId = (): string | undefined => context.getStore()?.request_id;

/**
 * One JSON line: time, level, the context (request, tenant, agent, session, run where known),
 * then the entry. A failed run is `warn` with its `error_type`.
 */
export function log(entry: LogEvent): void {
  let level = LEVELS[entry.event];
  if (entry.event === "run_finished" && entry.status === "error") level = "warn";
  const line = JSON.stringify({ at: new Date().toISOString(), level, ...context.getStore(), ...entry });
  if (level === "error") console.error(line);
  else if (level === "warn") console.warn(line);
  else console.log(line);
}
