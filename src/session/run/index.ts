/**
 * A run: its record (status, metrics, checkpoints), the agent loop that drives it step by
 * step, its retry policy, stop reasons, structured output and the queue message that starts
 * a background run.
 */
export { isActive, renderRun, type InputPart, type Run, type RunCaller, type RunRecord, type RunStatus } from "./run-record";
export { runMessageSchema, type RunMessage } from "./run-message";
export { CorruptRunRecordError } from "./run-record-schema";
export { parseRunRow } from "./run-inputs";
