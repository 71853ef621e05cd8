import type { Agent, ObjectJsonSchema, OnBusy } from "../../agents";
import type { Message } from "../../core/messages";
import type { SessionIdentity } from "../../run-model/session-protocol";
import type { InputPart, RunBase, RunCaller } from "../../run-model/run-record";

/** Everything a new run is made of: a plain turn, or a branch of an earlier run. */
export type NewRun = SessionIdentity & {
  agent: Agent;
  /** The user message the run adds; null for a branch that adds none. */
  input: InputPart[] | null;
  base: RunBase;
  parent_run_id: string | null;
  forked_from_checkpoint: string | null;
  metadata: Record<string, unknown>;
  stream: boolean;
  background: boolean;
  /** Chosen by the Worker for an `Idempotency-Key`: a retried POST finds the same run. */
  run_id?: string;
  /** Set on branches: emitted as `run_continued` after `run_started`. */
  continued_from?: { from_checkpoint: string | null };
  /** The run's own output schema (overrides the agent's); null or absent: the agent's. */
  output_schema?: ObjectJsonSchema | null;
  /** The Worker has just drawn the session's id: nobody knows it before the run's answer. */
  new_session?: boolean;
  /** A new session's history brought by the client, stored before the input (protocol.ts). */
  history?: Message[];
  /** The end user and prompt cache key of the run's calls. */
  caller?: RunCaller;
  /** Opaque to the session: what the API surface that started the run answers about it. */
  surface?: Record<string, unknown>;
  /** What the turn does when the session is busy (a branch: absent, it is refused). */
  on_busy?: OnBusy;
};
