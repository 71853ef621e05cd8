/** Structured log lines. Never put a secret, a prompt or a tool output in one. */
export type LogEvent =
  | { event: "unhandled_error"; message: string }
  | { event: "run_finished"; run_id: string; status: string; duration_ms: number }
  | { event: "outbox_failed"; session_id: string; message: string }
  | { event: "alarm_failed"; message: string }
  | { event: "session_rebuilt"; session_id: string; messages: number; runs: number };

export function log(entry: LogEvent): void {
  console.log(JSON.stringify({ at: new Date().toISOString(), ...entry }));
}
