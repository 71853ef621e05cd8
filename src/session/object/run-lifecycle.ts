import { newId, nowIso } from "../../core/ids";
import { errorMessage } from "../../core/errors";
import { log, withLogContext } from "../../core/log";
import { eventRetentionCutoff } from "../../core/settings";
import { deleteSessionMedia } from "../../media/store";
import type { OnBusy } from "../../agents";
import type { ProviderError } from "../../providers/types";
import { driveRun, type LoopHost } from "../run/run-loop";
import {
  isActive,
  isApproval,
  isUnfinished,
  isWaitingForRetry,
  newRunRecord,
  renderRun,
  type Run,
  type RunRecord,
  type RunStatus,
} from "../../run-model/run-record";
import { deleteSessionRows } from "../store/mirror-statements";
import type { MirrorStatement } from "../store/session-store";
import { runEventStream } from "../stream/events";
import type { ContinueRunRequest, Result, RunAnswer, SessionIdentity } from "../../run-model/session-protocol";
import { armApprovalTimeout, type Decision, recordAnswers, remainingActions } from "./approval-answers";
import { frontTicket, nextTicket, queuedRunOf, takeTicket } from "./queue-tickets";
import { answerRun, stretchEnd } from "./run-answers";
import { activeRunFor, busyRefusal, onBusyOf } from "./busy-policy";
import { RunDrivers } from "./run-drivers";
import { addSteer, steerIdOf, takeSteers, withStoredSteers } from "./steers";
import { canMove, IllegalTransitionError, move } from "./run-states";
import type { NewRun } from "./new-run";
import { deletingFailure, fail, type Refusal, type SessionCore } from "./session-core";

/** A running run whose invocation dies is resumed by the alarm after this long without progress. */
const WATCHDOG_MS = 60_000;
/** Runs one session's queue holds at most (docs/api.md, Busy sessions); past them, `409 queue_full`. */
export const MAX_QUEUED_RUNS = 16;

/** The statuses a run ends a stretch in: final, or paused for client tool results. */
type StopStatus = Exclude<RunStatus, "pending" | "running">;

/**
 * A run's life in one session object, and the only code that changes a run's status: create,
 * start, drive, wake after an eviction, wait for a retry, pause, continue, cancel, sweep,
 * finish, and the session's delete. Each move is checked against the state table
 * (run-states.ts), committed through SessionCore's one path, and announced by its event.
 * SessionCore keeps the storage, the events and the mirror; the run loop (run-loop.ts) decides
 * what a step does and asks this class to move the run.
 */
export class RunLifecycle {
  private readonly drivers: RunDrivers;

  constructor(private readonly core: SessionCore) {
    this.drivers = new RunDrivers(core.ctx.storage);
  }

  // ── What the session object asks before it acts ─────────────────────────────────────

  /** True from the first instant of a delete, in this instance or one that was evicted during it. */
  isDeleting(): boolean {
    return this.drivers.isDeleting();
  }

  /** True while a loop of this instance drives the run. */
  isDriven(runId: string): boolean {
    return this.drivers.isDriven(runId);
  }

  /** Runs between their creation and their first step (a test asserts none is left behind). */
  launchingRuns(): string[] {
    return this.drivers.launchingRuns();
  }

  /** The refusal of a new turn while a run holds the session or waits in its queue, or while it is being deleted; null when it is free. */
  busyFailure(): Refusal | null {
    if (this.drivers.isDeleting()) return deletingFailure({ tenant: this.core.tenant(), session_id: this.core.sessionId });
    return busyRefusal(this.core.store);
  }

  /** What a turn on this busy session does (busy-policy.ts). */
  onBusyOf(requested: OnBusy | undefined): OnBusy {
    return onBusyOf(this.core.store, requested);
  }

  /** Resolves once the terminal event of a run's ended stretch is out: its next transition may go on. */
  announced(runId: string): Promise<void> {
    return this.drivers.announced(runId);
  }

  /** Resolves once every run's terminal event is out and the D1 copy the runs started is done. */
  async quiesced(): Promise<void> {
    await this.drivers.allAnnounced();
    await this.core.flushed();
  }

  /** Resolves once no loop of this instance drives the run. */
  stopped(runId: string): Promise<void> {
    return this.drivers.stopped(runId);
  }

  /** Resolves when the run's current stretch ends (its terminal event), or after `timeoutMs` (run-answers.ts). */
  stretchEnd(runId: string, timeoutMs?: number): Promise<void> {
    return stretchEnd(this.core.hub, runId, timeoutMs);
  }

  /** The answer to a start or a continue: the stream, or (`waitForStop`) the run once it has stopped. */
  answer(runId: string, stream: ReadableStream<Uint8Array> | null, waitForStop = true): Promise<RunAnswer> {
    return answerRun(this.core.store, this.core.hub, runId, stream, waitForStop);
  }

  // ── new → pending | running ─────────────────────────────────────────────────────────

  /**
   * Records a new run and takes the session's turn for it. The caller has checked, with no
   * await since, that the session is free: the check and this write are one synchronous step.
   * A `run_id` the object already has (an `Idempotency-Key` retry) answers that run again.
   */
  async create(spec: NewRun): Promise<RunAnswer> {
    // An interrupt ends the active run's stretch: it waits until the stretch before it is
    // announced, then decides and commits with no await (createNow).
    for (;;) {
      const target = this.interruptTarget(spec);
      if (!target || !this.drivers.isAnnouncing(target.id)) return this.createNow(spec);
      await this.drivers.announced(target.id);
    }
  }

  /** The active run a plain turn with `on_busy` `interrupt` or `rollback` would cancel, or null. */
  private interruptTarget(spec: NewRun): RunRecord | null {
    return this.drivers.isDeleting() ? null : activeRunFor(this.core.store, spec, ["interrupt", "rollback"]);
  }

  private async createNow(spec: NewRun): Promise<RunAnswer> {
    const { core } = this;
    const existing = spec.run_id ? core.store.getRun(spec.run_id) : null;
    if (existing) {
      // A retried request (same Idempotency-Key) is answered the run it created, its events from the start.
      const replay = spec.stream ? core.replayOf(spec, existing.id, 0) : null;
      const answer = await this.answer(existing.id, replay, !spec.background);
      return answer.ok ? { ...answer, replayed: true } : answer;
    }
    const owner = core.store.getMeta("agent_id");
    if (owner !== null && owner !== spec.agent.id) return fail("not_found", `Session ${spec.session_id} not found`);
    if (spec.history && spec.history.length > 0 && core.store.headRun()) {
      return fail("invalid_request", `Session ${spec.session_id} has a history already: a brought conversation starts a new session`);
    }
    const now = nowIso();
    let status: RunStatus = spec.background ? "pending" : "running";
    let ticket: number | undefined;
    const steered = this.steerTarget(spec);
    if (steered) return this.steer(steered, spec);
    let base = spec.base;
    const target = this.interruptTarget(spec);
    if (target) {
      // Cancelled as by a cancel, and the turn taken in the very next commit: nobody comes between.
      const rollback = this.onBusyOf(spec.on_busy) === "rollback";
      this.drivers.abort(target.id);
      // Its run_cancelled goes out before the new run's run_started (open waits for every announcement).
      this.endNow(target, "cancelled", {}, { reason: rollback ? "rolled_back" : "interrupted" }, () => null).announced.catch(
        () => undefined,
      );
      // Interrupt: on top of what the run did. Rollback: from where it started (its base), its messages in no later history.
      base = rollback ? (target.base ?? { parent: null, until: null }) : { parent: target.id, until: null };
    }
    const busy = target ? null : this.busyFailure();
    if (busy) {
      // Only a plain turn may wait in the queue; a branch takes the turn or is refused.
      if (this.drivers.isDeleting() || spec.parent_run_id !== null || this.onBusyOf(spec.on_busy) !== "enqueue") return busy;
      const waiting = core.store.queuedRuns().length;
      if (waiting >= MAX_QUEUED_RUNS) {
        return fail("queue_full", `Session ${spec.session_id} has ${waiting} queued runs, the most a session may hold`, {
          session_id: spec.session_id,
          queued: waiting,
        });
      }
      status = "queued";
      ticket = nextTicket(core.store);
    }
    if (!canMove("new", status)) throw new IllegalTransitionError("new", status);
    const run = newRunRecord({
      id: spec.run_id ?? newId("run"),
      agent: spec.agent,
      session_id: spec.session_id,
      status,
      input: spec.input ?? [],
      parent_run_id: spec.parent_run_id,
      forked_from_checkpoint: spec.forked_from_checkpoint,
      metadata: spec.metadata,
      created_at: now,
      started_at: status === "running" ? now : null,
      output_schema: spec.output_schema ?? spec.agent.output_schema ?? null,
      base,
    });
    if (ticket !== undefined) run.queued = ticket;
    if (spec.surface) run.surface = spec.surface;
    if (spec.caller) run.caller = spec.caller;
    if (spec.continued_from) run.continued_from = spec.continued_from;
    let stream: ReadableStream<Uint8Array> | null = null;
    if (ticket !== undefined) return this.enqueue(run, ticket, spec);
    await this.drivers.launch(run.id, async () => {
      core.commit(() => {
        if (owner === null) {
          core.store.setMeta("agent_id", spec.agent.id);
          core.store.setMeta("created_at", now);
        }
        core.store.setMeta("active_run_id", run.id);
        core.store.setMeta("head_run_id", run.id);
        core.store.setMeta("updated_at", now);
        const history = (spec.history ?? []).map((message) => core.appendMessage(run, message.role, message.content));
        const input = spec.input && spec.input.length > 0 ? [core.appendMessage(run, "user", spec.input)] : [];
        return [core.mirrorSessionRow(), ...history, ...input, ...core.saveRun(run)];
      });
      // Subscribed before the first await: a cancel during the flush below ends the stream too.
      if (spec.stream) stream = runEventStream(core.hub, run.id);
      if (spec.background) core.setTimer("queue_fallback", Date.now() + core.queueFallbackMs());
      // A running run is never without its watchdog: an object that dies while the row goes to D1 resumes it.
      else this.touch();
      // The run's row reaches D1 before anyone learns its id (GET …/runs/{id} finds it anywhere).
      // A synchronous turn on a new session shows neither id before its answer, and its finish
      // drains the mirror before that: its first model call does not wait for D1.
      const unseen = spec.new_session === true && !spec.stream && !spec.background;
      if (!unseen) await core.flush();
      if (spec.background) await core.enqueue(run);
    });
    if (!spec.background && core.store.runStatus(run.id) === "running") void this.open(run, "request");
    return this.answer(run.id, stream, !spec.background);
  }

  /**
   * Records a run behind the session's turn: nothing of it goes into the transcript until it
   * starts (its input stays in the record), and it holds no turn. `run_queued` says its place.
   */
  private async enqueue(run: RunRecord, ticket: number, spec: NewRun): Promise<RunAnswer> {
    const { core } = this;
    core.commit(() => {
      takeTicket(core.store, ticket);
      return core.saveRun(run);
    });
    const stream = spec.stream ? runEventStream(core.hub, run.id) : null;
    core.emit(run, "run_queued", { position: core.store.queuedRuns().length });
    // Its row reaches D1 before anyone learns its id, as any run's.
    await core.flush();
    return this.answer(run.id, stream, !spec.background);
  }

  /**
   * Gives the free turn to the first queued run, inside the commit that freed it (or that finds
   * it free): the run becomes the active one, running, on the session's head, and its input
   * joins the transcript. Returns it and its statements; null when the queue is empty.
   */
  private takeNextQueued(now: string): { next: RunRecord; statements: MirrorStatement[] } | null {
    const { core } = this;
    const next = core.store.queuedRuns()[0];
    if (!next) return null;
    move(next, "running");
    next.started_at = now;
    next.base = { parent: core.store.headRun()?.id ?? null, until: null };
    core.store.setMeta("active_run_id", next.id);
    core.store.setMeta("head_run_id", next.id);
    const input = next.input.length > 0 ? [core.appendMessage(next, "user", next.input)] : [];
    return { next, statements: [...input, ...core.saveRun(next)] };
  }

  // ── steers: an input joins the running run ─────────────────────────────────────────────

  /** The active run a plain turn with `on_busy: "steer"` joins, or null. */
  private steerTarget(spec: NewRun): RunRecord | null {
    return this.drivers.isDeleting() ? null : activeRunFor(this.core.store, spec, ["steer"]);
  }

  /**
   * Sends the turn's input to the active run: stored with it at once (`input_steered`), given to
   * its model before the next call. A paused run has stopped: the steer becomes a queued run
   * (`steer_queued`). Answered at once; a retried steer (same Idempotency-Key) as the first was.
   */
  private async steer(active: RunRecord, spec: NewRun): Promise<RunAnswer> {
    const { core } = this;
    const steerId = spec.run_id ? steerIdOf(spec.run_id) : newId("str");
    const answer = (into: string, replayed = false): RunAnswer => ({
      ok: true,
      run: renderRun(core.store.getRun(active.id) ?? active),
      stream: null,
      steer: { steer_id: steerId, steered_into: into },
      ...(replayed ? { replayed: true } : {}),
    });
    const known = core.store.runSteeredWith(steerId);
    if (known) return answer(known, true);
    const steer = { id: steerId, input: spec.input ?? [], created_at: nowIso() };
    if (active.status === "paused") {
      const ticket = nextTicket(core.store);
      const queued = queuedRunOf(active, steer, ticket);
      core.commit(() => {
        takeTicket(core.store, ticket);
        return core.saveRun(queued);
      });
      core.emit(active, "input_steered", { steer_id: steerId, input: steer.input });
      core.emit(active, "steer_queued", { steer_id: steerId, queued_as: queued.id });
      core.emit(queued, "run_queued", { position: core.store.queuedRuns().length });
      await core.flush();
      return answer(queued.id);
    }
    addSteer(core, active, steer);
    core.emit(active, "input_steered", { steer_id: steerId, input: steer.input });
    await core.flush();
    return answer(active.id);
  }

  // ── pending → running ───────────────────────────────────────────────────────────────

  /** Starts the pending background run, if there is one; a second start does nothing. */
  startPending(trigger: string): boolean {
    const run = this.core.store.activeRun();
    if (run?.status !== "pending") return false;
    move(run, "running");
    run.started_at = nowIso();
    this.core.commit(() => this.core.saveRun(run));
    this.core.setTimer("queue_fallback", null);
    void this.open(run, trigger).then(() => this.core.flushSoon());
    return true;
  }

  /**
   * The queue consumer's start of a background run. Queues deliver at least once, so a run that
   * is already running or finished is left alone (and a running one no loop drives is woken).
   */
  startFromQueue(runId: string): Result<{ started: boolean }> {
    const run = this.core.store.getRun(runId);
    if (!run) return fail("not_found", `Run ${runId} not found`);
    const started = run.status === "pending" && this.core.store.activeRun()?.id === runId && this.startPending("queue");
    if (!started) this.wakeAfterEviction();
    return { ok: true, started };
  }

  /**
   * A started run's first events (a branch's `run_continued`, from its stored record), then its
   * loop. They wait for the terminal event of a run whose stretch ended just before (a turn
   * released before its event is out), so a session's log never shows a run starting before the
   * last one ended.
   */
  private async open(run: RunRecord, trigger: string): Promise<void> {
    await this.drivers.launch(run.id, () => this.drivers.allAnnounced());
    if (this.core.store.runStatus(run.id) !== "running") return;
    withLogContext(this.core.logContextOf(run), () => {
      log({ event: "run_started", run_id: run.id, trigger });
      this.core.emitOpening(run);
      this.drive(run.id);
    });
  }

  // ── running: driven, woken, waiting for a retry ──────────────────────────────────────

  /** Starts the run's loop unless one drives it already; a loop that throws ends the run as an internal error. */
  private drive(runId: string): void {
    if (this.drivers.isDriven(runId)) return;
    const run = this.core.store.getRun(runId);
    this.drivers.drive(runId, (signal) =>
      (run ? withLogContext(this.core.logContextOf(run), () => driveRun(this.loopHost(), runId, signal)) : Promise.resolve()).catch(
        async (error: unknown) => {
          log({ event: "unhandled_error", message: errorMessage(error) });
          try {
            const current = this.core.store.getRun(runId);
            if (current?.status === "running") {
              await this.finish(current, "error", { error: { type: "internal", message: "Internal error", retryable: false } });
            }
          } catch {
            // The session was deleted under the run.
          }
        },
      ),
    );
  }

  /** What the run loop needs: the session's storage and events (SessionCore), and these moves. */
  private loopHost(): LoopHost {
    const { core } = this;
    return {
      env: core.env,
      store: core.store,
      sessionId: core.sessionId,
      compactions: core.compactions,
      spend: core.spend,
      tenant: () => core.tenant(),
      emit: (run, type, data) => core.emit(run, type, data),
      commit: (change) => core.commit(change),
      appendMessage: (run, role, content) => core.appendMessage(run, role, content),
      saveRun: (run) => core.saveRun(run),
      addCheckpoint: (run, at) => core.addCheckpoint(run, at),
      saveCompaction: (compaction) => core.saveCompaction(compaction),
      flushSoon: () => core.flushSoon(),
      touch: () => this.touch(),
      finish: (run, status, patch) => this.finish(run, status, patch),
      retryLater: (run, failure, delayMs, step) => this.retryLater(run, failure, delayMs, step),
      takeSteers: (run) => takeSteers(this.core, run),
    };
  }

  /**
   * Pushes the watchdog forward before a step, unless it was pushed less than half its period ago:
   * a watchdog that rings while the run is driven only pushes it again (resumeStalled), and a
   * step's timer write is a row written.
   */
  private touch(): void {
    const now = Date.now();
    const due = this.core.timerDue("watchdog");
    if (due !== null && due - now >= WATCHDOG_MS / 2) return;
    this.core.setTimer("watchdog", now + WATCHDOG_MS);
  }

  /**
   * Called on every entry: a running run that no invocation of this instance drives was left by
   * one that died (an eviction, a reset, a deploy), so it resumes from its last persisted step.
   */
  wakeAfterEviction(): void {
    this.announceLeft();
    this.startQueueIfFree("object restarted");
    const active = this.core.store.activeRun();
    if (
      active?.status !== "running" ||
      this.drivers.isDriven(active.id) ||
      this.drivers.isLaunching(active.id) ||
      isWaitingForRetry(active)
    )
      return;
    log({ event: "run_resumed", run_id: active.id, reason: "object restarted" });
    this.drive(active.id);
  }

  /**
   * Announces a stretch's end that an instance committed and died before announcing (its
   * terminal event, and with it the run's lifecycle webhooks, would otherwise never go out).
   * Called on every entry and on the alarm (the outbox timer the end armed rings after a crash).
   */
  announceLeft(): void {
    const left = unannouncedOf(this.core);
    if (!left || this.drivers.isAnnouncing(left.run_id)) return;
    const run = this.core.store.getRun(left.run_id);
    if (!run || run.status !== left.status) {
      this.core.store.setMeta("unannounced", null);
      return;
    }
    log({ event: "run_resumed", run_id: run.id, reason: "terminal event not announced" });
    this.core.events.openStretch(run.id);
    void this.drivers.holdUntilAnnounced(run.id, this.announce(run, left.status, { reason: left.reason ?? undefined }));
  }

  /** The watchdog rang: resumes the active run when no invocation drives it (the one that did has died). */
  resumeStalled(): void {
    const active = this.core.store.activeRun();
    if (active?.status !== "running" || this.drivers.isLaunching(active.id)) return;
    if (isWaitingForRetry(active)) {
      this.core.setTimer("retry", active.retry_at ?? Date.now());
    } else if (this.drivers.isDriven(active.id)) {
      this.touch();
    } else {
      this.drive(active.id);
    }
  }

  /** Records a failed model call's attempt and waits on the alarm before the next one (the loop stops until it rings). */
  private retryLater(run: RunRecord, failure: ProviderError, delayMs: number, step: number): void {
    withStoredSteers(this.core.store, run);
    const failedAttempt = run.call_attempt ?? 1;
    run.attempts += 1;
    run.metrics.retries += 1;
    run.call_attempt = failedAttempt + 1;
    run.retry_at = Date.now() + delayMs;
    this.core.commit(() => this.core.saveRun(run));
    this.core.setTimer("retry", run.retry_at);
    this.core.setTimer("watchdog", run.retry_at + WATCHDOG_MS);
    this.core.emit(run, "retry", {
      step,
      attempt: failedAttempt,
      delay_ms: delayMs,
      error: { type: failure.type, message: failure.message, status: failure.status },
    });
    this.core.flushSoon();
  }

  /** The retry alarm rang: the wait is over (an alarm never rings early), the next attempt starts. */
  endRetryWait(): void {
    const active = this.core.store.activeRun();
    if (active?.status !== "running") return;
    if (active.retry_at) {
      active.retry_at = null;
      this.core.commit(() => this.core.saveRun(active));
    }
    this.resumeStalled();
  }

  /**
   * The Cron sweeper's call for a run that the mirror shows without progress: resume it, or
   * end it after too many sweeps found it stuck.
   */
  async sweep(runId: string, maxSweeps: number): Promise<Result<{ action: string }>> {
    await this.core.flush();
    const run = this.core.store.getRun(runId);
    if (!run || !isActive(run.status) || run.status === "paused") return { ok: true, action: "none" };
    if (this.drivers.isDriven(run.id) || isWaitingForRetry(run)) return { ok: true, action: "alive" };
    run.sweeps = (run.sweeps ?? 0) + 1;
    if (run.sweeps > maxSweeps) {
      await this.finish(run, "error", {
        error: { type: "internal", message: `The run made no progress after ${maxSweeps} recovery attempts`, retryable: false },
      });
      return { ok: true, action: "ended" };
    }
    this.core.commit(() => this.core.saveRun(run));
    log({ event: "run_resumed", run_id: run.id, reason: "cron sweep" });
    if (run.status === "pending") this.startPending("cron sweep");
    else this.drive(run.id);
    return { ok: true, action: "resumed" };
  }

  // ── paused → running ────────────────────────────────────────────────────────────────

  /**
   * Resumes a paused run in place with the client's tool results and decisions (checked by the
   * caller against its required actions): recorded with the run's move, then announced, then driven.
   */
  continueInPlace(run: RunRecord, request: ContinueRunRequest): Promise<RunAnswer> {
    const stream = request.stream ? runEventStream(this.core.hub, run.id) : null;
    const decisions = (request.approvals ?? []).map((a) => ({ ...a, source: "client" as const, key_id: request.key_id ?? null }));
    this.answerActions(run, request.tool_results, decisions);
    return this.answer(run.id, stream);
  }

  /**
   * The agent's approval timeout rang: the calls the paused run still waits to have approved are
   * denied (`approval timed out`). The run goes on when nothing else is pending; a client tool's
   * result still pending keeps it paused, waiting for that alone.
   */
  expireApprovals(): void {
    const run = this.core.store.activeRun();
    if (run?.status !== "paused") return;
    const expired = run.required_actions.filter(isApproval);
    if (expired.length === 0) return;
    const decisions = expired.map((a) => ({
      tool_call_id: a.tool_call_id,
      approve: false,
      reason: "approval timed out",
      source: "timeout" as const,
      key_id: null,
    }));
    this.answerActions(run, [], decisions);
  }

  /** Answers a paused run's required actions (approval-answers.ts): with nothing left, the run goes on. */
  private answerActions(run: RunRecord, results: ContinueRunRequest["tool_results"], decisions: Decision[]): void {
    const goesOn = remainingActions(run, [...results, ...decisions]).length === 0;
    if (goesOn) move(run, "running");
    recordAnswers(this.core, run, results, decisions);
    if (goesOn) this.drive(run.id);
  }

  // ── any active status → cancelled | error; running → paused | completed ─────────────

  /** Cancels a run; idempotent. The turn is free as soon as this answers. */
  async cancel(runId: string, reason: string): Promise<Result<{ run: Run }>> {
    await this.drivers.announced(runId);
    const run = this.core.store.getRun(runId);
    if (!run) return fail("not_found", `Run ${runId} not found`);
    if (isUnfinished(run.status)) {
      this.drivers.abort(runId);
      await this.finish(run, "cancelled", {}, { reason });
    }
    return { ok: true, run: renderRun(this.core.store.getRun(runId) ?? run) };
  }

  /** Ends a pending run whose queue message was dead-lettered; a run that started is left alone. */
  async failPending(runId: string, reason: string): Promise<Result<{ run: Run }>> {
    const run = this.core.store.getRun(runId);
    if (!run) return fail("not_found", `Run ${runId} not found`);
    if (run.status === "pending") await this.finish(run, "error", { error: { type: "internal", message: reason, retryable: false } });
    return { ok: true, run: renderRun(this.core.store.getRun(runId) ?? run) };
  }

  /**
   * Ends a run's stretch: paused for client tool results, or for good. The turn is released (but
   * by a pause), the run's end checkpoint recorded, the mirror drained, and then its terminal
   * event goes out; until it is out, the run's next move waits (`announced`).
   */
  async finish(run: RunRecord, status: StopStatus, patch: Partial<RunRecord>, eventData: { reason?: string } = {}): Promise<void> {
    // The previous stretch's terminal event goes out before this one's (a cancel of a run whose run_paused is not out yet).
    await this.drivers.announced(run.id);
    // A session being deleted starts nothing (its queued runs are cancelled with it).
    const { announced, next } = this.endNow(run, status, patch, eventData, (now) =>
      this.drivers.isDeleting() ? null : this.takeNextQueued(now),
    );
    // Opened once this run's terminal event is out (open waits for it); launching from now on, so no entry resumes it first.
    if (next) this.openQueued(next, "queue");
    await announced;
  }

  /**
   * The synchronous part of a stretch's end, for a run whose previous stretch is announced: the
   * move, in one commit with the release of the turn (but by a pause) and the turn given to
   * `successor`'s run, if any; then the announcement, which the run's next move waits for.
   */
  private endNow(
    run: RunRecord,
    status: StopStatus,
    patch: Partial<RunRecord>,
    eventData: { reason?: string },
    successor: (now: string) => { next: RunRecord; statements: MirrorStatement[] } | null,
  ): { announced: Promise<void>; next: RunRecord | null } {
    const { core } = this;
    const from = core.store.runStatus(run.id) ?? run.status;
    if (!canMove(from, status)) throw new IllegalTransitionError(from, status);
    const now = nowIso();
    // Steers its model never saw become queued runs, first in line (never lost).
    withStoredSteers(core.store, run);
    const unseen = run.steers ?? [];
    run.steers = [];
    // A run cancelled in the queue never ran: no time, no checkpoint.
    const ran = from !== "queued";
    // The checkpoint and the terminal event of the run's end go out even when nothing else did here.
    core.events.openStretch(run.id);
    Object.assign(run, patch);
    move(run, status);
    if (status !== "paused") {
      run.finished_at = now;
      run.metrics.duration_ms = ran ? Date.parse(now) - Date.parse(run.started_at ?? run.created_at) : 0;
    }
    let next: RunRecord | null = null;
    const requeued: { steer_id: string; queued_as: RunRecord }[] = [];
    core.commit(() => {
      const statements: MirrorStatement[] = [];
      for (const [index, steer] of unseen.entries()) {
        const queued = queuedRunOf(run, steer, frontTicket(core.store) - (unseen.length - index));
        requeued.push({ steer_id: steer.id, queued_as: queued });
        statements.push(...core.saveRun(queued));
      }
      // The turn is released before the terminal answer or event goes out (docs/api.md), and in
      // the same transaction given to the first queued run: nobody can take it in between.
      if (status !== "paused" && core.store.getMeta("active_run_id") === run.id) {
        core.store.setMeta("active_run_id", null);
        const taken = successor(now);
        if (taken) {
          next = taken.next;
          statements.push(...taken.statements);
        }
      }
      core.store.setMeta("updated_at", now);
      // Cleared with the terminal event: an object that dies in between announces it when it wakes.
      core.store.setMeta("unannounced", JSON.stringify({ run_id: run.id, status, reason: eventData.reason ?? null }));
      if (status !== "paused" && ran) core.addCheckpoint(run, { after: "end", tool_call_id: null, tool_name: null });
      return [...core.saveRun(run), ...statements, core.mirrorSessionRow()];
    });
    for (const { steer_id, queued_as } of requeued) {
      core.emit(run, "steer_queued", { steer_id, queued_as: queued_as.id });
      core.emit(queued_as, "run_queued", { position: 1 + core.store.queuedRuns().findIndex((q) => q.id === queued_as.id) });
    }
    for (const timer of ["watchdog", "retry", "queue_fallback", "approval"] as const) core.setTimer(timer, null);
    if (status === "paused" && run.required_actions.some(isApproval)) armApprovalTimeout(core, run);
    // The object's own copy of the event log follows the same retention as the D1 mirror's.
    if (status !== "paused") core.store.pruneEvents(eventRetentionCutoff(core.env, new Date()));
    return { announced: this.drivers.holdUntilAnnounced(run.id, this.announce(run, status, eventData)), next };
  }

  /** A run that has just taken the turn from the queue: its watchdog, then its opening events and loop. */
  private openQueued(run: RunRecord, trigger: string): void {
    this.touch();
    void this.open(run, trigger);
  }

  /**
   * Starts the first queued run when no run holds the turn: after a rebuild from D1, or when an
   * entry finds the queue waiting on a free session.
   */
  private startQueueIfFree(trigger: string): void {
    const { core } = this;
    if (core.store.activeRun() || core.store.queuedRuns().length === 0) return;
    let next: RunRecord | null = null;
    core.commit(() => {
      const taken = this.takeNextQueued(nowIso());
      next = taken?.next ?? null;
      return taken ? [...taken.statements, core.mirrorSessionRow()] : [];
    });
    if (next) this.openQueued(next, trigger);
  }

  /** Every finished run is in D1 before its terminal event, which is built from the stored run. */
  private async announce(finished: RunRecord, status: StopStatus, eventData: { reason?: string }): Promise<void> {
    const { core } = this;
    // Its last model call is counted in the tenant's ledger by then too (sent when the call answered).
    await Promise.all([core.flush(), core.spend.settled(finished.id)]);
    let run = finished;
    try {
      run = core.store.getRun(finished.id) ?? finished;
    } catch {
      // The session was deleted under the run: its last state is the one it finished with.
    }
    if (status === "completed") core.emit(run, "run_completed", { output: run.output, metrics: run.metrics });
    else if (status === "error")
      core.emit(run, "run_error", { error: run.error ?? { type: "internal", message: "Internal error", retryable: false } });
    else if (status === "cancelled") core.emit(run, "run_cancelled", { reason: eventData.reason ?? "cancelled" });
    else core.emit(run, "run_paused", { required_actions: run.required_actions });
    // In the same write as the event (no await between).
    try {
      if (unannouncedOf(core)?.run_id === run.id) core.store.setMeta("unannounced", null);
    } catch {
      // The session was deleted under the run: nothing is left to announce.
    }
    log({
      event: "run_finished",
      run_id: run.id,
      status,
      duration_ms: run.metrics.duration_ms,
      ...(run.error ? { error_type: run.error.type } : {}),
    });
  }

  // ── the session's delete ─────────────────────────────────────────────────────────────

  /** Cancels the session's run and removes all of its data, here and in D1, under the deletion tombstone. */
  async deleteSession(identity: SessionIdentity): Promise<Result<object>> {
    if (this.drivers.isDeleting())
      return fail("session_busy", `Session ${identity.session_id} is being deleted`, { session_id: identity.session_id });
    await this.drivers.deleteWith(() => this.erase(identity));
    return { ok: true };
  }

  /** Finishes a delete that an evicted instance left half done; a refusal while it cannot. */
  async finishLeftDelete(identity: SessionIdentity): Promise<Refusal | null> {
    if (!this.drivers.hasOrphanTombstone()) return null;
    try {
      await this.drivers.deleteWith(() => this.erase(identity));
      log({ event: "session_delete_resumed", session_id: identity.session_id });
      return null;
    } catch (error) {
      log({ event: "session_delete_failed", session_id: identity.session_id, message: errorMessage(error) });
      return deletingFailure(identity);
    }
  }

  /** True when the storage holds a tombstone that no delete of this instance is working on. */
  hasLeftDelete(): boolean {
    return this.drivers.hasOrphanTombstone();
  }

  /**
   * The steps of a delete, run under the tombstone (run-drivers.ts): from its first instant no
   * new run starts (busyFailure), since one would be mirrored to D1 after its rows were deleted
   * and brought back by the queue. Every step may run again after an eviction.
   */
  private async erase(identity: SessionIdentity): Promise<void> {
    const { core } = this;
    const active = core.store.activeRun();
    if (active) {
      await this.drivers.announced(active.id);
      this.drivers.abort(active.id);
      await this.finish(core.store.getRun(active.id) ?? active, "cancelled", {}, { reason: "session deleted" });
    }
    // Their waiters (a blocking or streamed turn) get their end too.
    for (const queued of core.store.queuedRuns()) await this.finish(queued, "cancelled", {}, { reason: "session deleted" });
    // A run finished just before may still be announcing: its terminal event would reach D1 after the rows are deleted.
    await this.quiesced();
    core.store.clearOutbox();
    const statements = deleteSessionRows(identity.tenant, identity.session_id);
    await core.env.DB.batch(statements.map((s) => core.env.DB.prepare(s.sql).bind(...s.params)));
    // Before the object's storage goes: a failed R2 call leaves the tombstone, and the next entry tries again.
    await deleteSessionMedia(core.env.MEDIA, identity);
    this.drivers.abortAll();
    await core.wipe();
  }
}

type Unannounced = { run_id: string; status: StopStatus; reason: string | null };

/** The stretch's end committed but not announced, if any (the `unannounced` meta). */
function unannouncedOf(core: SessionCore): Unannounced | null {
  const text = core.store.getMeta("unannounced");
  return text ? (JSON.parse(text) as Unannounced) : null;
}
