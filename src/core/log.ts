/** Structured log lines. Never put a secret, a prompt or a tool output in one. */
export type LogEvent =
  | { event: "unhandled_error"; message: string }
  | { event: "run_started"; run_id: string; trigger: string }
  | { event: "run_finished"; run_id: string; status: string; duration_ms: number }
  | { event: "run_resumed"; run_id: string; reason: string }
  | { event: "queue_message"; run_id: string | null; outcome: string }
  | { event: "sweep"; stale_runs: number; events_deleted: number }
  | { event: "outbox_failed"; session_id: string; message: string }
  | { event: "alarm_failed"; message: string }
  | { event: "session_rebuilt"; session_id: string; messages: number; runs: number }
  | { event: "media_missing"; session_id: string; media_id: string }
  | { event: "media_kept"; session_id: string; run_id: string; objects: number; reason: string }
  /** An event of a run whose stretch had ended (its terminal event was out) was not emitted. */
  | { event: "late_event_dropped"; run_id: string; type: string };

export function log(entry: LogEvent): void {
  console.log(JSON.stringify({ at: new Date().toISOString(), ...entry }));
}
