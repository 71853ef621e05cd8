import { z } from "zod";
import { parseStored } from "../core/json-depth";
import { log } from "../core/log";
import type { RunRecord } from "./run-record";

const status = z.enum(["queued", "pending", "running", "paused", "completed", "cancelled", "error"]);
const nullableString = z.string().nullable();

const metrics = z.looseObject({
  input_tokens: z.number(),
  output_tokens: z.number(),
  total_tokens: z.number(),
  model_calls: z.number(),
  tool_calls: z.number(),
  retries: z.number(),
  duration_ms: z.number(),
});

/**
 * The fields of a stored run record that the loop, the lifecycle and `renderRun` rely on. Loose:
 * fields it does not name (and fields added later) are kept as stored.
 */
const runRecordSchema = z.looseObject({
  id: z.string(),
  agent_id: z.string(),
  session_id: z.string(),
  status,
  input: z.array(z.looseObject({ type: z.string() })),
  error: z.looseObject({ type: z.string(), message: z.string() }).nullable(),
  required_actions: z.array(z.looseObject({ tool_call_id: z.string(), name: z.string() })),
  parent_run_id: nullableString,
  forked_from_checkpoint: nullableString,
  agent_version: z.number(),
  attempts: z.number(),
  metrics,
  metadata: z.record(z.string(), z.unknown()),
  created_at: z.string(),
  started_at: nullableString,
  finished_at: nullableString,
  agent: z.looseObject({ id: z.string(), version: z.number() }),
  retry_at: z.number().nullable().optional(),
  checkpoints: z.array(z.looseObject({ id: z.string(), run_id: z.string(), step: z.number(), message_index: z.number() })).optional(),
  base: z.object({ parent: nullableString, until: z.number().nullable() }).optional(),
});

/** A stored run record that does not parse: an internal error, never a TypeError deep in the loop. */
export class CorruptRunRecordError extends Error {
  constructor(
    readonly runId: string,
    readonly where: string,
  ) {
    super(`The stored record of run ${runId} (${where}) is not a valid run`);
    this.name = "CorruptRunRecordError";
  }
}

/**
 * Parses a run body read back from the object's storage or from D1 (`where` names which, for the
 * log). A body that fails is logged with its run id and the fields at fault, and thrown as
 * CorruptRunRecordError.
 */
export function parseRunRecord(body: string, where: string): RunRecord {
  const value = parseStored<unknown>(body);
  const parsed = runRecordSchema.safeParse(value);
  if (parsed.success) return parsed.data as unknown as RunRecord;
  const id = typeof value === "object" && value !== null && "id" in value && typeof value.id === "string" ? value.id : "unknown";
  log({
    event: "corrupt_run_record",
    run_id: id,
    where,
    fields: parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).slice(0, 10),
  });
  throw new CorruptRunRecordError(id, where);
}
