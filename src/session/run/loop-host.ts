import type { Block } from "../../core/messages";
import type { ProviderError } from "../../providers/types";
import type { Checkpoint, RunRecord, RunStatus } from "../../run-model/run-record";
import type { SessionEnv } from "../session-env";
import type { MirrorStatement, StoredMessage } from "../store/session-store";
import type { TranscriptHost } from "../transcript/model-history";

/** What the loop needs from the Session object that drives it: its storage and events, and the run's moves (run-lifecycle.ts). */
export interface LoopHost extends TranscriptHost {
  readonly env: SessionEnv;
  readonly sessionId: string;
  appendMessage(run: RunRecord, role: StoredMessage["role"], content: Block[]): MirrorStatement;
  /** Ends the run: releases the turn, drains the mirror, then emits the terminal event. */
  finish(run: RunRecord, status: Exclude<RunStatus, "pending" | "running">, patch: Partial<RunRecord>): Promise<void>;
  /** Copies queued statements to D1 in the background. */
  flushSoon(): void;
  /** Pushes the watchdog forward before a step. */
  touch(): void;
  /**
   * Records a checkpoint at the run's last message (inside a `commit`); its event goes out
   * once the commit is done.
   */
  addCheckpoint(run: RunRecord, at: { after: Checkpoint["after"]; tool_call_id: string | null; tool_name: string | null }): void;
  /** Appends the run's pending steers to the transcript as user messages (one commit); false when it has none. */
  takeSteers(run: RunRecord): boolean;
  /** Records a failed attempt and arms the retry alarm; the loop stops until it rings. */
  retryLater(run: RunRecord, failure: ProviderError, delayMs: number, step: number): void;
}
