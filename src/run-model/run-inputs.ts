import type { RunRecord } from "./run-record";
import { parseRunRecord } from "./run-record-schema";

/**
 * A run's write-once values (agent snapshot, input, output schema, surface) are stored apart from its
 * changing body, in the object's storage and in the D1 mirror alike (`run_inputs` in both), so
 * that a step's save serialises and sends only the small part that changes.
 */
export function splitRun(run: RunRecord): { changing: string; once: string } {
  const { agent, input, output_schema, surface, ...changing } = run;
  return { changing: JSON.stringify(changing), once: JSON.stringify({ agent, input, output_schema, surface }) };
}

/** A stored run as read back: its body and, when it has one, its write-once row. */
export type RunRow = { body: string; once: string | null };

/**
 * Joins a run's body with its write-once row and checks the result (`where` names the storage,
 * for the log). A body stored before the split carries those values itself and has no row.
 */
export function parseRunRow(row: RunRow, where: string): RunRecord {
  return parseRunRecord(joinRunRow(row), where);
}

/** The whole record's JSON text of a stored run's rows. */
export function joinRunRow(row: RunRow): string {
  if (row.once === null) return row.body;
  // `output_schema` absent from the once-row (undefined when written) stays absent: the agent's then applies.
  return `${row.body.slice(0, -1)}${row.body.length > 2 ? "," : ""}${row.once.slice(1)}`;
}
