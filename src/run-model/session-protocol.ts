import type { Agent, ObjectJsonSchema, OnBusy } from "../agents";
import type { ApiErrorType } from "../core/errors";
import type { Message } from "../core/messages";
import type { StoredMessage } from "./stored-message";
import type { InputPart, Run, RunCaller, RunMetrics } from "./run-record";

/** Every call into a Session object says whose session it is (docs/architecture.md). */
export type SessionIdentity = { tenant: string; session_id: string };

export type StartRunRequest = SessionIdentity & {
  agent: Agent;
  input: InputPart[];
  /** The run's own output schema; null or absent: the agent's. */
  output_schema?: ObjectJsonSchema | null;
  metadata: Record<string, unknown>;
  stream: boolean;
  /** Recorded as pending and executed from the queue. */
  background: boolean;
  /** Chosen by the Worker for an `Idempotency-Key`: a retried POST finds the same run. */
  run_id?: string;
  /** The Worker has just drawn the session's id (no `session_id`, no `Idempotency-Key`): D1 holds nothing of it. */
  new_session?: boolean;
  /**
   * The Worker asked the tenant's ledger just now and no budget is spent (`watched`: some budget
   * applies to the agent or session): the run's first model call need not ask again.
   */
  budget_checked?: { watched: boolean };
  /**
   * A new session's conversation so far, as its client brought it (`/v1/responses` without
   * `previous_response_id`): stored as the run's first messages, before its input. With no
   * input, the history ends with tool results and the run goes on from them.
   */
  history?: Message[];
  /** The end user and prompt cache key the provider gets with each call, where it has such fields (RunRecord.caller). */
  caller?: RunCaller;
  /** What the API surface that started the run answers about it (`/v1/responses`: render.ts); opaque here. */
  surface?: Record<string, unknown>;
  /** What the turn does when the session is busy; absent: the agent's `on_busy` as its active run has it. */
  on_busy?: OnBusy;
};

export type ToolResultInput = { tool_call_id: string; output: string; is_error?: boolean };

/** A person's decision on a tool call waiting for approval. */
export type ApprovalInput = { tool_call_id: string; approve: boolean; reason?: string };

export type ContinueRunRequest = SessionIdentity & {
  run_id: string;
  tool_results: ToolResultInput[];
  /** Decisions on the tool calls waiting for approval. */
  approvals?: ApprovalInput[];
  /** The API key that sent the decisions (`approval_decided.key_id`); "admin" for the admin token. */
  key_id?: string;
  stream: boolean;
  /** For a branch: `"end"` (default), `"last_user"` or a checkpoint id. */
  continue_from?: string;
  fork?: boolean;
  input: InputPart[] | null;
  background: boolean;
  metadata: Record<string, unknown>;
  /** The agent as it is now: a branch runs on it (a fork may change provider). */
  agent: Agent;
  /** Chosen by the Worker for an `Idempotency-Key`: the branch's run id. */
  new_run_id?: string;
};

/** A refusal that the Worker turns into docs/api.md's error answer. */
export type SessionFailure = { type: ApiErrorType; message: string; details?: Record<string, unknown> };

export type Result<T> = ({ ok: true } & T) | { ok: false; error: SessionFailure };

/** A started or continued run: its stream, or the Run once it has stopped. */
export type RunAnswer = Result<{
  run: Run;
  stream: ReadableStream<Uint8Array> | null;
  /** The run existed already (a retried request): this request created nothing. */
  replayed?: boolean;
  /** A steer (`on_busy: "steer"`): the run it was sent to (`run`), its id, and the run it went into (that run, or a queued one). */
  steer?: { steer_id: string; steered_into: string };
}>;

export type SessionView = {
  id: string;
  agent_id: string;
  active_run_id: string | null;
  /** The runs waiting for the session's turn (`on_busy: "enqueue"`), first in line first. */
  queued_run_ids: string[];
  head_run_id: string | null;
  run_count: number;
  metrics: RunMetrics;
  created_at: string;
  updated_at: string;
};

export type TranscriptMessage = Omit<StoredMessage, never>;

/** The answer of `POST /v1/sessions/{id}/compact`. */
export type CompactionReport = { summary: string | null; compacted_messages: number; tokens_before: number; tokens_after: number };
