/**
 * The model of a run, below everything that stores, drives or serves runs: its record and the
 * schema it is parsed with from storage, the split into write-once inputs and a changing body,
 * the queue message that starts a background run, how a model's answer stops it, a stored
 * transcript message, and the RPC protocol between the Worker and a session's object.
 */
export {
  ACTIVE_STATUSES,
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
} from "./run-record";
export { runMessageSchema, type RunMessage } from "./run-message";
export { CorruptRunRecordError } from "./run-record-schema";
export { parseRunRow } from "./run-inputs";
export type { StoredMessage } from "./stored-message";
export type * from "./session-protocol";
