import type { Agent, ObjectJsonSchema } from "../agents";
import type { OutputError } from "../agents/output-validation";
import type { Block, MediaBlock } from "../core/messages";
import type { ErrorType } from "../providers/types";

export type RunStatus = "queued" | "pending" | "running" | "paused" | "completed" | "cancelled" | "error";

/** The statuses of a run that holds its session's turn. */
export const ACTIVE_STATUSES: readonly RunStatus[] = ["pending", "running", "paused"];
export const isActive = (status: RunStatus) => ACTIVE_STATUSES.includes(status);
/** A run whose current stretch has not ended: it waits for its turn or its start, or runs (a paused one's stretch has ended). */
export const isGoingOn = (status: RunStatus | null) => status === "queued" || status === "pending" || status === "running";
/** A run that has not ended: it holds the turn, or waits in the session's queue for it (`queued`). */
export const isUnfinished = (status: RunStatus) => status === "queued" || isActive(status);

/** Who a run is for, as the providers take it: an end user id (abuse monitoring) and a prompt cache key. */
export type RunCaller = { end_user?: string; prompt_cache_key?: string };

/** A part of a run's input as stored: text, or a reference to media in R2 (never the bytes). */
export type InputPart = { type: "text"; text: string } | MediaBlock;

/** `errors`: with `output_invalid`, how the final answer misses the output schema. */
export type RunError = { type: ErrorType; message: string; retryable: boolean; status?: number; errors?: OutputError[] };

/**
 * A final answer held back because it missed the output schema (structured-output.ts): the
 * answer, its errors, and the transcript's next index when it was held (the repair is pending
 * while nothing has been added since).
 */
export type OutputRepair = { answer: Block[]; errors: OutputError[]; next_index: number };

/** A position in a run after a completed step (docs/api.md, Checkpoints and step replay). */
export type Checkpoint = {
  id: string;
  run_id: string;
  step: number;
  after: "tool_result" | "end";
  tool_call_id: string | null;
  tool_name: string | null;
  /** Index of the transcript message the checkpoint ends at (the step's tool results, or the run's last). */
  message_index: number;
  created_at: string;
};

/**
 * Where a run's history comes from: its parent's history up to message `until` (inclusive;
 * null = all of it), then the run's own messages. Transcripts stay append-only: a branch is
 * this run tree, never a copy.
 */
export type RunBase = { parent: string | null; until: number | null };

/**
 * What a paused run waits for: a client tool's result (`tool_result`; entries stored without a
 * type are these), or a person's decision on a tool call (`approval`).
 */
export type RequiredAction = { type?: "tool_result" | "approval"; tool_call_id: string; name: string; arguments: unknown };

/** Whether a required action waits for an approval (not a client tool's result). */
export const isApproval = (action: RequiredAction) => action.type === "approval";

export type RunMetrics = {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  reasoning_tokens: number;
  total_tokens: number;
  cost_usd: number | null;
  model_calls: number;
  tool_calls: number;
  retries: number;
  duration_ms: number;
  time_to_first_token_ms: number | null;
};

export const emptyMetrics = (): RunMetrics => ({
  input_tokens: 0,
  output_tokens: 0,
  cache_read_tokens: 0,
  cache_write_tokens: 0,
  reasoning_tokens: 0,
  total_tokens: 0,
  // Prices come with the metrics issue; until then the cost is unknown, never a guess.
  cost_usd: null,
  model_calls: 0,
  tool_calls: 0,
  retries: 0,
  duration_ms: 0,
  time_to_first_token_ms: null,
});

/**
 * A run as both stores keep it: the API's Run fields plus what the loop needs to resume it
 * anywhere (the agent as it was when the run started, where its messages begin).
 */
export type RunRecord = {
  id: string;
  agent_id: string;
  session_id: string;
  status: RunStatus;
  input: InputPart[];
  output: unknown;
  error: RunError | null;
  required_actions: RequiredAction[];
  parent_run_id: string | null;
  forked_from_checkpoint: string | null;
  agent_version: number;
  attempts: number;
  metrics: RunMetrics;
  metadata: Record<string, unknown>;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  /** Internal: the agent definition this run executes with. */
  agent: Agent;
  /** Internal: the end user and prompt cache key sent with each model call (the request's). */
  caller?: RunCaller;
  /** Internal, write-once: what the API surface that started the run answers about it (`/v1/responses`); opaque to the session. */
  surface?: Record<string, unknown>;
  /** Internal: the output schema in force (the run's, else the agent's); absent on older runs: the agent's. */
  output_schema?: ObjectJsonSchema | null;
  /** Internal: the final answer held back for the run's one repair attempt. */
  output_repair?: OutputRepair;
  /** Internal: 1-based attempt of the run's current model call (`x-agentry-attempt`). */
  call_attempt?: number;
  /** Internal: epoch ms before which the current model call waits for its retry. */
  retry_at?: number | null;
  /** Internal: how often the Cron sweeper found the run without progress. */
  sweeps?: number;
  /** Internal: the history this run continues (absent on runs made before forks existed). */
  base?: RunBase;
  /** Internal: the run's checkpoints, in order. */
  checkpoints?: Checkpoint[];
  /** Internal: a context-window error already had its one compaction and extra attempt. */
  overflow_compacted?: boolean;
  /** Internal: the run's last answer was cut or declined; the run ends with this error (stop-reasons.ts). */
  answer_error?: RunError;
  /**
   * Internal: the run was created behind a busy session's turn (`on_busy: "enqueue"`): its ticket
   * in the session's queue (tickets only grow, so the queue keeps the order of arrival). Until
   * it starts, none of it is in any history.
   */
  queued?: number;
  /** Internal: steers sent to the run that its model has not seen yet, in order (run-lifecycle.ts). */
  steers?: Steer[];
  /** Internal: the ids of the steers its model has seen (a retried steer is recognised). */
  steered?: string[];
  /** Internal: tool calls a person approved, not run yet or run (each runs once). */
  approved?: string[];
  /** Internal: a branch's `run_continued` data, emitted after its `run_started` (stored: a pending fork may start in another instance). */
  continued_from?: { from_checkpoint: string | null };
};

/** A run that waited in its session's queue and never started (it was cancelled there): part of no history. */
export const neverStarted = (run: Pick<RunRecord, "queued" | "started_at">) => run.queued !== undefined && run.started_at === null;

/** When a run joined its session's history: a queued run when it started, any other when it was created. */
const joinedAt = (run: Pick<RunRecord, "queued" | "started_at" | "created_at">) =>
  (run.queued !== undefined ? run.started_at : null) ?? run.created_at;

/** The session's head among its runs in creation order: the one that joined its history last (a queued run is in none until it starts). */
export const headOf = <Run extends Pick<RunRecord, "status" | "queued" | "started_at" | "created_at">>(runs: Run[]): Run | undefined =>
  runs
    .filter((run) => run.status !== "queued" && !neverStarted(run))
    .reduce<Run | undefined>((head, run) => (head === undefined || joinedAt(run) >= joinedAt(head) ? run : head), undefined);

/** The ids of the session's queued runs, first in line first. */
export const queuedIdsOf = (runs: Pick<RunRecord, "id" | "status" | "queued">[]): string[] =>
  runs
    .filter((run) => run.status === "queued")
    .sort((a, b) => (a.queued ?? 0) - (b.queued ?? 0))
    .map((run) => run.id);

/** An input sent to a running run (`on_busy: "steer"`): given to its model as a user message before the next call. */
export type Steer = { id: string; input: InputPart[]; created_at: string };

/** A new run's record: what the caller gives, and the fields every run starts with. */
export function newRunRecord(
  run: Pick<RunRecord, "id" | "agent" | "session_id" | "status" | "input" | "created_at"> & Partial<RunRecord>,
): RunRecord {
  // Field order as docs/api.md shows the Run: id first.
  const { id, ...given } = run;
  return {
    id,
    agent_id: run.agent.id,
    agent_version: run.agent.version,
    output: null,
    error: null,
    required_actions: [],
    parent_run_id: null,
    forked_from_checkpoint: null,
    attempts: 1,
    metrics: emptyMetrics(),
    metadata: {},
    started_at: null,
    finished_at: null,
    checkpoints: [],
    ...given,
  };
}

/** The public Run object (docs/api.md) of a record. */
export function renderRun(run: RunRecord) {
  const {
    agent: _agent,
    surface: _surface,
    caller: _caller,
    output_schema: _schema,
    output_repair: _repair,
    call_attempt: _attempt,
    retry_at: _retry,
    sweeps: _sweeps,
    base: _base,
    checkpoints: _checkpoints,
    overflow_compacted: _overflow,
    answer_error: _answerError,
    continued_from: _continuedFrom,
    queued: _queued,
    steers: _steers,
    steered: _steered,
    approved: _approved,
    ...visible
  } = run;
  return visible;
}

/** True while the run waits on its retry timer (an alarm), not on a model call. */
export const isWaitingForRetry = (run: RunRecord, now = Date.now()) => (run.retry_at ?? 0) > now;

export type Run = ReturnType<typeof renderRun>;
