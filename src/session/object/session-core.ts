import type { Block } from "../../core/messages";
import { newId, nowIso } from "../../core/ids";
import { log, withLogContext, type LogContext } from "../../core/log";
import { eventRetentionCutoff, positiveNumber } from "../../core/settings";
import type { Env } from "../../env";
import type { ProviderError } from "../../providers/types";
import { CompactionStore, mirrorCompaction, rebuildCompactions, type Compaction } from "../transcript/compaction-store";
import { EventLog } from "../store/event-log";
import { Mirror } from "../store/mirror";
import { replayStream } from "../stream/replay-stream";
import { DeltaBuffer } from "../stream/delta-buffer";
import { EventHub, isTerminal, type EventData, type RunEvent, type RunEventType } from "../stream/events";
import { mirrorMessage, mirrorRun, mirrorRunInputs, mirrorSession } from "../store/mirror-statements";
import type { RunAnswer, SessionFailure, SessionIdentity } from "./protocol";
import { initializeNew, rebuildFromMirror } from "../store/rebuild";
import { driveRun, type LoopHost } from "../run/run-loop";
import type { RunMessage } from "../run/run-message";
import { isWaitingForRetry, renderRun, type Checkpoint, type RunRecord, type RunStatus } from "../run/run-record";
import { SessionSockets } from "../stream/sockets";
import { SessionStore, type MirrorStatement, type StoredMessage } from "../store/session-store";
import { Timers, type TimerName } from "./timers";
import { RunSupervisor } from "./run-supervisor";

/** A running run whose invocation dies is resumed by the alarm after this long without progress. */
const WATCHDOG_MS = 60_000;
/** A failed D1 mirror batch is retried on the alarm after this long. */
export const OUTBOX_RETRY_MS = 2_000;

/** A run that may still emit events of its own (any other's stretch has ended). */
const isGoingOn = (status: RunStatus | null) => status === "pending" || status === "running";

/** A refusal the Worker turns into API.md's error answer. */
export const fail = (type: SessionFailure["type"], message: string, details?: Record<string, unknown>) =>
  ({ ok: false, error: { type, message, details } }) as const;

/** A refusal the object answers instead of doing what it was asked. */
export type Refusal = ReturnType<typeof fail>;

/** The refusal of new work while the session is being deleted. */
export const deletingFailure = (identity: SessionIdentity): Refusal =>
  fail("session_busy", `Session ${identity.session_id} is being deleted`, { session_id: identity.session_id });

/**
 * The state and the mechanics of one session's object: storage, the event hub and log,
 * sockets, timers, the outbox to D1 and the transitions of its runs. The Durable Object
 * class (session-object.ts) is its RPC surface; the run loop drives it as its `LoopHost`.
 */
export class SessionCore implements LoopHost {
  readonly store: SessionStore;
  readonly hub = new EventHub();
  readonly timers: Timers;
  /** The life of the session's runs: drivers, launching runs, terminal events not out yet, the deletion tombstone. */
  readonly runs: RunSupervisor;
  /** Checkpoints recorded in the current commit, whose events follow it. */
  private readonly newCheckpoints: { run: RunRecord; checkpoint: Checkpoint }[] = [];
  nextSeqValue: number | null = null;
  flushing: Promise<void> = Promise.resolve();
  /** The stored event log and its per-step buffer (event-log.ts). */
  readonly events: EventLog;
  /** The session's hibernatable WebSockets (sockets.ts). */
  readonly sockets: SessionSockets;
  /** The session's compaction summaries (compaction-store.ts). */
  readonly compactions: CompactionStore;
  /** The copy of the outbox and the event log to D1 (mirror.ts). */
  readonly mirror: Mirror;
  /** A streamed answer's deltas, stored a window's worth at a time (delta-buffer.ts). */
  private readonly deltas = new DeltaBuffer();
  /** Whether this instance armed the outbox timer since the mirror was last idle. */
  private mirrorArmed = false;

  constructor(
    readonly ctx: DurableObjectState,
    readonly env: Env,
  ) {
    this.store = new SessionStore(ctx.storage.sql);
    this.timers = new Timers(this.store, ctx.storage);
    this.runs = new RunSupervisor(ctx.storage);
    this.events = new EventLog(this.store, env.DB);
    this.mirror = new Mirror(this.store, () => {
      this.mirrorArmed = false;
      this.setTimer("outbox", null);
    });
    this.sockets = new SessionSockets(ctx);
    this.compactions = new CompactionStore(ctx.storage.sql);
  }

  /** The session this object's storage holds, or null when it holds none (never used, or deleted). */
  storedIdentity(): SessionIdentity | null {
    if (!this.store.isInitialized()) return null;
    const tenant = this.store.getMeta("tenant");
    const session_id = this.store.getMeta("session_id");
    return tenant !== null && session_id !== null ? { tenant, session_id } : null;
  }

  get sessionId(): string {
    return this.store.getMeta("session_id") ?? "";
  }

  flushSoon(): void {
    void this.flush();
  }

  saveCompaction(compaction: Compaction): MirrorStatement {
    this.compactions.put(compaction);
    return mirrorCompaction(this.tenant(), this.sessionId, compaction);
  }

  /** Pushes the watchdog forward before a step. */
  touch(): void {
    this.setTimer("watchdog", Date.now() + WATCHDOG_MS);
  }

  /** SSE of a run's stored events after `after`, then its live ones until its stretch ends. */
  replayOf(identity: SessionIdentity, runId: string, after: number): ReadableStream<Uint8Array> {
    return replayStream({
      hub: this.hub,
      runId,
      after,
      read: (from) => this.events.read(identity, runId, from),
      isLive: () => {
        const status = this.store.runStatus(runId);
        return this.events.isOpen(runId) || status === "pending" || status === "running";
      },
    });
  }


  /**
   * Fills empty storage from the D1 mirror; for a session whose id the Worker has just drawn
   * (`isNew`), with nothing, without reading D1.
   */
  async rebuild(identity: SessionIdentity, isNew = false): Promise<void> {
    await this.ctx.blockConcurrencyWhile(async () => {
      if (this.store.isInitialized()) return;
      this.nextSeqValue = null;
      this.events.reset();
      this.mirrorArmed = false;
      if (isNew) {
        initializeNew(this.store, identity.tenant, identity.session_id);
        return;
      }
      const counts = await rebuildFromMirror(this.store, this.env.DB, identity.tenant, identity.session_id);
      await rebuildCompactions(this.compactions, this.env.DB, identity.tenant, identity.session_id);
      if (counts.runs > 0) log({ event: "session_rebuilt", session_id: identity.session_id, ...counts });
      // Runs mirrored before the write-once split send that row again (rebuild.ts).
      if (this.store.outbox(1).length > 0) this.armMirror();
      if (this.store.activeRun()?.status === "running") this.setTimer("watchdog", Date.now());
    });
  }

  busyFailure() {
    if (this.runs.isDeleting()) return deletingFailure({ tenant: this.tenant(), session_id: this.sessionId });
    const active = this.store.activeRun();
    if (!active) return null;
    return fail("session_busy", `Session ${active.session_id} has a ${active.status} run`, {
      session_id: active.session_id,
      active_run_id: active.id,
      active_status: active.status,
    });
  }

  /**
   * Called on every entry: a running run that no invocation of this instance drives was
   * left by one that died (an eviction, a reset, a deploy), so it resumes from its last
   * persisted step.
   */
  wake(): void {
    const active = this.store.activeRun();
    if (active?.status === "running" && !this.runs.isDriven(active.id) && !this.runs.isLaunching(active.id) && !isWaitingForRetry(active)) {
      log({ event: "run_resumed", run_id: active.id, reason: "object restarted" });
      this.drive(active.id);
    }
  }

  /** Sends the background run to the queue. A failed send is left to the fallback timer. */
  async enqueue(run: RunRecord): Promise<void> {
    const message: RunMessage = { tenant: this.tenant(), session_id: run.session_id, run_id: run.id };
    try {
      await this.env.RUNS.send(message);
    } catch (error) {
      log({ event: "queue_message", run_id: run.id, outcome: `send failed: ${error instanceof Error ? error.message : String(error)}` });
    }
  }

  queueFallbackMs(): number {
    return positiveNumber(this.env.QUEUE_FALLBACK_SECONDS, 30) * 1000;
  }

  /** Resumes the active run when no invocation drives it (the one that did has died). */
  resumeStalledRun(): void {
    const active = this.store.activeRun();
    if (active?.status !== "running" || this.runs.isLaunching(active.id)) return;
    if (isWaitingForRetry(active)) {
      this.setTimer("retry", active.retry_at ?? Date.now());
    } else if (this.runs.isDriven(active.id)) {
      this.setTimer("watchdog", Date.now() + WATCHDOG_MS);
    } else {
      this.drive(active.id);
    }
  }

  /** The retry alarm rang: the wait is over (an alarm never rings early), the next attempt starts. */
  endRetryWait(): void {
    const active = this.store.activeRun();
    if (active?.status !== "running") return;
    if (active.retry_at) {
      active.retry_at = null;
      this.commit(() => this.saveRun(active));
    }
    this.resumeStalledRun();
  }

  /** Starts the pending background run, if there is one; a second start does nothing. */
  startPending(trigger: string): boolean {
    const run = this.store.activeRun();
    if (run?.status !== "pending") return false;
    const now = nowIso();
    run.status = "running";
    run.started_at = now;
    this.commit(() => this.saveRun(run));
    this.setTimer("queue_fallback", null);
    void this.begin(run, trigger).then(() => this.flushSoon());
    return true;
  }

  /**
   * A run's first events (a branch's `run_continued`, from its stored record), then its loop.
   * They wait for the terminal event of a run whose stretch ended just before (a turn released
   * before its event is out), so a session's log never shows a run starting before the last one ended.
   */
  async begin(run: RunRecord, trigger: string): Promise<void> {
    await this.runs.launch(run.id, () => this.runs.allSettled());
    if (this.store.runStatus(run.id) !== "running") return;
    withLogContext(this.logContextOf(run), () => {
      log({ event: "run_started", run_id: run.id, trigger });
      this.emitOpening(run);
      this.drive(run.id);
    });
  }

  /** The ids a run's log lines carry (core/log.ts): every line its loop logs has them. */
  logContextOf(run: Pick<RunRecord, "id" | "agent_id">): LogContext {
    return { tenant: this.tenant(), session_id: this.sessionId, agent_id: run.agent_id, run_id: run.id };
  }

  /** Records a failed model call's attempt and waits on the alarm before the next one. */
  scheduleRetry(run: RunRecord, failure: ProviderError, delayMs: number, step: number): void {
    const failedAttempt = run.call_attempt ?? 1;
    run.attempts += 1;
    run.metrics.retries += 1;
    run.call_attempt = failedAttempt + 1;
    run.retry_at = Date.now() + delayMs;
    this.commit(() => this.saveRun(run));
    this.setTimer("retry", run.retry_at);
    this.setTimer("watchdog", run.retry_at + WATCHDOG_MS);
    this.emit(run, "retry", {
      step,
      attempt: failedAttempt,
      delay_ms: delayMs,
      error: { type: failure.type, message: failure.message, status: failure.status },
    });
    this.flushSoon();
  }

  /** Starts the run's loop unless one drives it already; a loop that throws ends the run as an internal error. */
  drive(runId: string): void {
    if (this.runs.isDriven(runId)) return;
    const run = this.store.getRun(runId);
    this.runs.drive(runId, (signal) =>
      (run ? withLogContext(this.logContextOf(run), () => driveRun(this, runId, signal)) : Promise.resolve()).catch(async (error: unknown) => {
        log({ event: "unhandled_error", message: error instanceof Error ? error.message : String(error) });
        try {
          const current = this.store.getRun(runId);
          if (current?.status === "running") {
            await this.finish(current, "error", { error: { type: "internal", message: "Internal error", retryable: false } });
          }
        } catch {
          // The session was deleted under the run.
        }
      }),
    );
  }

  /**
   * Resolves when the run's current stretch ends (its terminal event), or after `timeoutMs`;
   * either way it stops listening. Call it synchronously after reading the run as active: the
   * terminal event follows the stored status, so it cannot be missed.
   */
  stopOf(runId: string, timeoutMs?: number): Promise<void> {
    return new Promise((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const unsubscribe = this.hub.subscribe(
        (event) => {
          if (event.run_id === runId && isTerminal(event.type)) done();
        },
        { internal: true },
      );
      const done = () => {
        clearTimeout(timer);
        unsubscribe();
        resolve();
      };
      if (timeoutMs !== undefined) timer = setTimeout(done, timeoutMs);
    });
  }

  /** Resolves once the terminal event of a run's ended stretch is out: its next transition may go on. */
  settled(runId: string): Promise<void> {
    return this.runs.settled(runId);
  }

  /** The answer to a start or a continue: the stream, or (`waitForStop`) the run once it has stopped. */
  async answer(runId: string, stream: ReadableStream<Uint8Array> | null, waitForStop = true): Promise<RunAnswer> {
    const current = this.store.getRun(runId);
    if (!current) return fail("not_found", `Run ${runId} not found`);
    if (stream || !waitForStop) return { ok: true, run: renderRun(current), stream };
    if (current.status === "running" || current.status === "pending") await this.stopOf(runId);
    try {
      return { ok: true, run: renderRun(this.store.getRun(runId) ?? current), stream: null };
    } catch {
      return fail("not_found", `Run ${runId} not found: its session was deleted`);
    }
  }

  async finish(
    run: RunRecord,
    status: Exclude<RunStatus, "pending" | "running">,
    patch: Partial<RunRecord>,
    eventData: { reason?: string } = {},
  ): Promise<void> {
    // The previous stretch's terminal event goes out before this one's (a cancel of a run whose
    // run_paused is not out yet).
    await this.runs.settled(run.id);
    const now = nowIso();
    // The checkpoint and the terminal event of the run's end go out even when nothing else did here.
    this.events.openStretch(run.id);
    Object.assign(run, patch, { status });
    if (status !== "paused") {
      run.finished_at = now;
      run.metrics.duration_ms = Date.parse(now) - Date.parse(run.started_at ?? run.created_at);
    }
    this.commit(() => {
      // The turn is released before the terminal answer or event goes out (API.md).
      if (status !== "paused" && this.store.getMeta("active_run_id") === run.id) this.store.setMeta("active_run_id", null);
      this.store.setMeta("updated_at", now);
      if (status !== "paused") this.addCheckpoint(run, { after: "end", tool_call_id: null, tool_name: null });
      return [...this.saveRun(run), this.mirrorSessionRow()];
    });
    for (const timer of ["watchdog", "retry", "queue_fallback"] as const) this.setTimer(timer, null);
    // The object's own copy of the event log follows the same retention as the D1 mirror's.
    if (status !== "paused") this.store.pruneEvents(eventRetentionCutoff(this.env, new Date()));
    // Until its terminal event is out, the run's next transition waits (settled()): a continue or
    // a cancel that saw the stored status would otherwise emit before it.
    await this.runs.announcing(run.id, this.announce(run, status, eventData));
  }

  /** Every finished run is in D1 before its terminal event, which is built from the stored run. */
  private async announce(finished: RunRecord, status: Exclude<RunStatus, "pending" | "running">, eventData: { reason?: string }): Promise<void> {
    await this.flush();
    let run = finished;
    try {
      run = this.store.getRun(finished.id) ?? finished;
    } catch {
      // The session was deleted under the run: its last state is the one it finished with.
    }
    if (status === "completed") this.emit(run, "run_completed", { output: run.output, metrics: run.metrics });
    else if (status === "error") this.emit(run, "run_error", { error: run.error ?? { type: "internal", message: "Internal error", retryable: false } });
    else if (status === "cancelled") this.emit(run, "run_cancelled", { reason: eventData.reason ?? "cancelled" });
    else this.emit(run, "run_paused", { required_actions: run.required_actions });
    log({ event: "run_finished", run_id: run.id, status, duration_ms: run.metrics.duration_ms, ...(run.error ? { error_type: run.error.type } : {}) });
  }

  /** A run's opening events: `run_started`, then (a branch's, unless it comes next anyway) `run_continued`. */
  private emitOpening(run: RunRecord, withContinued = true): void {
    this.emit(run, "run_started", { agent_id: run.agent_id, agent_version: run.agent_version });
    if (run.continued_from && withContinued) this.emit(run, "run_continued", run.continued_from);
  }

  emit<Type extends RunEventType>(run: RunRecord, type: Type, data: EventData<Type>): void {
    const createdAt = nowIso();
    if ((type === "content_delta" || type === "reasoning_delta") && run.agent.store_events !== false) {
      this.deltas.add(
        () => {
          try {
            this.emitNow(run, type, data, createdAt);
          } catch (error) {
            // Written from the window's timer: the session was deleted under the run.
            log({ event: "unhandled_error", message: error instanceof Error ? error.message : String(error) });
          }
        },
        this.hub.watched || this.sockets.isWatched(),
      );
      return;
    }
    // Any other event follows the deltas before it.
    this.deltas.release();
    this.emitNow(run, type, data, createdAt);
  }

  private emitNow<Type extends RunEventType>(run: RunRecord, type: Type, data: EventData<Type>, createdAt: string): void {
    // Nothing goes out for a run after its terminal event: a late event (a tool call or a model
    // stream that a cancel cut short) of a run that is no longer going on is dropped.
    if (!isTerminal(type) && !this.events.isOpen(run.id) && !isGoingOn(this.store.runStatus(run.id))) {
      log({ event: "late_event_dropped", run_id: run.id, type });
      return;
    }
    const stored = run.agent.store_events !== false;
    // A run's log opens with its opening events, even when the object died between the run's
    // creation and its first event: the resumed run emits them before anything else.
    if (stored && type !== "run_started" && run.started_at !== null && !this.events.hasOpened(run.id)) {
      this.emitOpening(run, type !== "run_continued");
    }
    const event: RunEvent = { seq: this.nextSeq(), type, run_id: run.id, session_id: run.session_id, created_at: createdAt, data };
    // Stored before anyone sees it (event-log.ts): the platform holds the frames below until the write is durable.
    this.events.record(event, stored);
    if (stored) this.armMirror();
    this.hub.publish(event);
    this.sockets.broadcast(event);
    if (isTerminal(type)) void this.flush();
  }

  /**
   * The session's next seq, persisted as it is handed out (with the event, in the same
   * coalesced write): a restart goes on from the last one, none is reused or skipped.
   */
  nextSeq(): number {
    if (this.nextSeqValue === null || this.nextSeqValue <= 0) this.nextSeqValue = Number(this.store.getMeta("seq_ceiling") ?? "0") + 1;
    const seq = this.nextSeqValue;
    this.store.setMeta("seq_ceiling", String(seq));
    this.nextSeqValue = seq + 1;
    return seq;
  }

  /** Applies `change` and puts its D1 statements in the outbox, in one transaction. */
  commit(change: () => MirrorStatement[]): void {
    try {
      this.ctx.storage.transactionSync(() => this.store.enqueueMirror(change()));
    } catch (error) {
      // Rolled back: nothing read inside it may outlive it (store/message-cache.ts).
      this.store.forgetParsed();
      throw error;
    }
    this.armMirror();
    // Events may commit themselves (emit), so the checkpoints' go out after the transaction.
    for (const { run, checkpoint } of this.newCheckpoints.splice(0)) {
      this.emit(run, "checkpoint", { checkpoint_id: checkpoint.id, step: checkpoint.step });
    }
  }

  /** Records a checkpoint at the run's last message; call it inside `commit`, before saving the run. */
  addCheckpoint(run: RunRecord, at: { after: Checkpoint["after"]; tool_call_id: string | null; tool_name: string | null }): void {
    const own = this.store.lastMessageIndexOf(run.id);
    const checkpoint: Checkpoint = {
      id: newId("ckpt"),
      run_id: run.id,
      step: run.metrics.model_calls,
      ...at,
      message_index: own ?? (run.base?.until ?? -1),
      created_at: nowIso(),
    };
    run.checkpoints = [...(run.checkpoints ?? []), checkpoint];
    this.newCheckpoints.push({ run, checkpoint });
  }

  appendMessage(run: RunRecord, role: StoredMessage["role"], content: Block[]): MirrorStatement {
    const message: StoredMessage = { index: this.store.nextMessageIndex(), run_id: run.id, role, content, created_at: nowIso() };
    this.store.appendMessage(message);
    return mirrorMessage(this.tenant(), run.session_id, message);
  }

  /** Stores a run; its D1 statements: the write-once values the first time, then the changing body. */
  saveRun(run: RunRecord): MirrorStatement[] {
    const first = this.store.putRun(run);
    const body = mirrorRun(this.tenant(), run, nowIso());
    return first ? [mirrorRunInputs(this.tenant(), run), body] : [body];
  }

  mirrorSessionRow(): MirrorStatement {
    const now = nowIso();
    return mirrorSession(this.tenant(), {
      id: this.store.getMeta("session_id") ?? "",
      agent_id: this.store.getMeta("agent_id") ?? "",
      created_at: this.store.getMeta("created_at") ?? now,
      updated_at: this.store.getMeta("updated_at") ?? now,
      last_seq: Number(this.store.getMeta("seq_ceiling") ?? "0"),
    });
  }

  tenant(): string {
    return this.store.getMeta("tenant") ?? "";
  }

  /**
   * The outbox timer is armed whenever something waits for D1 (an eviction leaves nothing
   * unsent until the session is touched); the mirror disarms it when it is idle.
   */
  private armMirror(): void {
    if (this.mirrorArmed) return;
    this.mirrorArmed = true;
    this.setTimer("outbox", Date.now() + OUTBOX_RETRY_MS);
  }

  /**
   * Resolves once every run's driver has settled and the D1 copy they started is done: a run that
   * a cancel (or its own end) finished may still be announcing, its terminal event emitted and
   * flushed after that.
   */
  async quiesced(): Promise<void> {
    await this.runs.allSettled();
    await this.flushing;
  }

  /** Copies the outbox and the stored events to D1 (mirror.ts); a failure is retried on the alarm. */
  flush(): Promise<void> {
    // Held deltas are stored first: a drain carries every event emitted before it.
    this.deltas.release();
    this.flushing = this.flushing.then(() => this.drainOutbox());
    return this.flushing;
  }

  async drainOutbox(): Promise<void> {
    let drained: boolean;
    try {
      if (!this.store.isInitialized()) return;
      drained = await this.mirror.drain(this.env.DB);
    } catch (error) {
      // The storage was deleted with the session under the drain; anything else is retried.
      if (!this.store.isInitialized()) return;
      log({ event: "outbox_failed", session_id: this.sessionId, message: error instanceof Error ? error.message : String(error) });
      drained = false;
    }
    if (!drained) {
      this.mirrorArmed = true;
      this.setTimer("outbox", Date.now() + OUTBOX_RETRY_MS);
    }
  }

  setTimer(name: TimerName, dueAt: number | null): void {
    this.timers.set(name, dueAt);
  }
}
