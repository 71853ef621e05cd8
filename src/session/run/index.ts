/**
 * Driving a run: the agent loop, its retry policy, structured output and the check of a paused
 * run's tool results. The run's own model (record, schema, queue message) is in src/run-model,
 * handed on here for the rest of the app.
 */
export {
  headOf,
  isActive,
  isUnfinished,
  queuedIdsOf,
  renderRun,
  type InputPart,
  type Run,
  type RunCaller,
  type RunRecord,
  type RunStatus,
} from "../../run-model/run-record";
export { runMessageSchema, type RunMessage } from "../../run-model/run-message";
export { CorruptRunRecordError } from "../../run-model/run-record-schema";
export { parseRunRow } from "../../run-model/run-inputs";
