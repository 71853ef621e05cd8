import { DurableObject } from "cloudflare:workers";
import type { Block } from "../core/messages";
import { newId, nowIso } from "../core/ids";
import { log } from "../core/log";
import type { Env } from "../env";
import type { ProviderError } from "../providers/types";
import { EventLog } from "./event-log";
import { replayStream } from "./event-stream";
import { EventHub, isTerminal, runEventStream, type RunEvent, type RunEventType } from "./events";
import { deleteSessionRows, mirrorMessage, mirrorRun, mirrorSession } from "./mirror";
import type {
  ContinueRunRequest,
  Result,
  RunAnswer,
  SessionFailure,
  SessionIdentity,
  SessionView,
  StartRunRequest,
} from "./protocol";
import { rebuildFromMirror, SEQ_RESERVE } from "./rebuild";
import { driveRun, type LoopHost } from "./run-loop";
import { emptyMetrics, isActive, isWaitingForRetry, renderRun, type Run, type RunRecord, type RunStatus } from "./run-record";
import { summarizeSession } from "./session-view";
import { SessionSockets, upgradeIdentity } from "./sockets";
import { SessionStore, type MirrorStatement, type StoredMessage } from "./storage";
import type { RunMessage } from "./run-message";
import { Timers, type TimerName } from "./timers";
import { checkToolResults } from "./tool-results";

/** A running run whose invocation dies is resumed by the alarm after this long without progress. */
const WATCHDOG_MS = 60_000;
/** A failed D1 mirror batch is retried on the alarm after this long. */
const OUTBOX_RETRY_MS = 2_000;

const fail = (type: SessionFailure["type"], message: string, details?: Record<string, unknown>) =>
  ({ ok: false, error: { type, message, details } }) as const;

/**
 * The Session Durable Object: the only writer of one session. It holds the turn lock, runs
 * the agent loop, fans events out and mirrors everything to D1 (DESIGN.md).
 */
export class SessionObject extends DurableObject<Env> {
  private readonly store: SessionStore;
  private readonly hub = new EventHub();
  private readonly drivers = new Map<string, AbortController>();
  private readonly host: LoopHost;
  private readonly timers: Timers;
  /** Runs between their creation and their first step: not to be resumed by `wake()`. */
  private readonly launching = new Set<string>();
  private nextSeqValue: number | null = null;
  private flushing: Promise<void> = Promise.resolve();
  /** The stored event log and its per-step buffer (event-log.ts). */
  private readonly events = new EventLog(new SessionStore(this.ctx.storage.sql), this.env.DB);
  /** The session's hibernatable WebSockets (sockets.ts). */
  private readonly sockets = new SessionSockets(this.ctx);

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new SessionStore(ctx.storage.sql);
    this.timers = new Timers(this.store, ctx.storage);
    const self = this;
    this.host = {
      env,
      store: this.store,
      get sessionId() {
        return self.store.getMeta("session_id") ?? "";
      },
      emit: (run, type, data) => this.emit(run, type, data),
      commit: (change) => this.commit(change),
      appendMessage: (run, role, content) => this.appendMessage(run, role, content),
      saveRun: (run) => this.saveRun(run),
      finish: (run, status, patch) => this.finish(run, status, patch),
      flushSoon: () => void this.flush(),
      touch: () => this.setTimer("watchdog", Date.now() + WATCHDOG_MS),
      scheduleRetry: (run, failure, delayMs, step) => this.scheduleRetry(run, failure, delayMs, step),
    };
  }

  // ── RPC methods (called by the Worker) ─────────────────────────────────────────────

  /**
   * Starts a turn. The lock is checked and taken synchronously, with no await in between.
   * A `run_id` the object already has (an `Idempotency-Key` retry) answers that run again
   * instead of starting another.
   */
  async startRun(request: StartRunRequest): Promise<RunAnswer> {
    if (!this.store.isInitialized()) await this.rebuild(request);
    this.wake();
    const existing = request.run_id ? this.store.getRun(request.run_id) : null;
    if (existing) {
      // A retried POST (same Idempotency-Key) is answered the run it created, its events from the start.
      const replay = request.stream ? this.replayOf(request, existing.id, 0) : null;
      return this.answer(existing.id, replay, this.stopOf(existing.id), !request.background);
    }
    const owner = this.store.getMeta("agent_id");
    if (owner !== null && owner !== request.agent.id) return fail("not_found", `Session ${request.session_id} not found`);
    const busy = this.busyFailure();
    if (busy) return busy;

    const now = nowIso();
    const run: RunRecord = {
      id: request.run_id ?? newId("run"),
      agent_id: request.agent.id,
      session_id: request.session_id,
      status: request.background ? "pending" : "running",
      input: request.input,
      output: null,
      error: null,
      required_actions: [],
      parent_run_id: null,
      forked_from_checkpoint: null,
      agent_version: request.agent.version,
      attempts: 1,
      metrics: emptyMetrics(),
      metadata: request.metadata,
      created_at: now,
      started_at: request.background ? null : now,
      finished_at: null,
      agent: request.agent,
      first_message: this.store.nextMessageIndex(),
    };
    const stream = request.stream ? runEventStream(this.hub, run.id) : null;
    const stopped = this.stopOf(run.id);
    this.launching.add(run.id);
    this.commit(() => {
      if (owner === null) {
        this.store.setMeta("agent_id", request.agent.id);
        this.store.setMeta("created_at", now);
      }
      this.store.setMeta("active_run_id", run.id);
      this.store.setMeta("updated_at", now);
      return [this.mirrorSessionRow(), this.appendMessage(run, "user", run.input), this.saveRun(run)];
    });
    if (request.background) this.setTimer("queue_fallback", Date.now() + this.queueFallbackMs());
    try {
      // The run's row reaches D1 before anyone learns its id (GET …/runs/{id} finds it anywhere).
      await this.flush();
      if (request.background) await this.enqueue(run);
    } finally {
      this.launching.delete(run.id);
    }
    if (!request.background && this.store.getRun(run.id)?.status === "running") {
      this.emit(run, "run_started", { agent_id: run.agent_id, agent_version: run.agent_version });
      this.drive(run.id);
    }
    return this.answer(run.id, stream, stopped, !request.background);
  }

  /**
   * Executes a pending background run: called by the queue consumer. Queues deliver at least
   * once, so a run that is already running or finished is left alone.
   */
  async executeRun(identity: SessionIdentity, runId: string): Promise<Result<{ started: boolean }>> {
    if (!this.store.isInitialized()) await this.rebuild(identity);
    const run = this.store.getRun(runId);
    if (!run) return fail("not_found", `Run ${runId} not found`);
    const started = run.status === "pending" && this.store.activeRun()?.id === runId && this.startPending("queue");
    if (!started) this.wake();
    return { ok: true, started };
  }

  /** Ends a pending run whose queue message was dead-lettered; a run that started is left alone. */
  async failPendingRun(identity: SessionIdentity, runId: string, reason: string): Promise<Result<{ run: Run }>> {
    if (!this.store.isInitialized()) await this.rebuild(identity);
    const run = this.store.getRun(runId);
    if (!run) return fail("not_found", `Run ${runId} not found`);
    if (run.status === "pending") {
      await this.finish(run, "error", { error: { type: "internal", message: reason, retryable: false } });
    }
    return { ok: true, run: renderRun(this.store.getRun(runId) ?? run) };
  }

  /**
   * The Cron sweeper's call for a run that the mirror shows without progress: resume it, or
   * end it after too many sweeps found it stuck.
   */
  async sweepRun(identity: SessionIdentity, runId: string, maxSweeps: number): Promise<Result<{ action: string }>> {
    if (!this.store.isInitialized()) await this.rebuild(identity);
    await this.flush();
    const run = this.store.getRun(runId);
    if (!run || !isActive(run.status) || run.status === "paused") return { ok: true, action: "none" };
    if (this.drivers.has(run.id) || isWaitingForRetry(run)) return { ok: true, action: "alive" };
    run.sweeps = (run.sweeps ?? 0) + 1;
    if (run.sweeps > maxSweeps) {
      await this.finish(run, "error", {
        error: { type: "internal", message: `The run made no progress after ${maxSweeps} recovery attempts`, retryable: false },
      });
      return { ok: true, action: "ended" };
    }
    this.commit(() => [this.saveRun(run)]);
    log({ event: "run_resumed", run_id: run.id, reason: "cron sweep" });
    if (run.status === "pending") this.startPending("cron sweep");
    else this.drive(run.id);
    return { ok: true, action: "resumed" };
  }

  /** The run once it has stopped, or after `waitMs` with its current state (a long-poll). */
  async waitForRun(identity: SessionIdentity, runId: string, waitMs: number): Promise<Result<{ run: Run }>> {
    if (!this.store.isInitialized()) await this.rebuild(identity);
    this.wake();
    const run = this.store.getRun(runId);
    if (!run) return fail("not_found", `Run ${runId} not found`);
    if (run.status === "pending" || run.status === "running") {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([this.stopOf(runId), new Promise((resolve) => (timer = setTimeout(resolve, waitMs)))]);
      clearTimeout(timer);
    }
    return { ok: true, run: renderRun(this.store.getRun(runId) ?? run) };
  }

  /** Resumes a paused run in place with the client's tool results. */
  async continueRun(request: ContinueRunRequest): Promise<RunAnswer> {
    if (!this.store.isInitialized()) await this.rebuild(request);
    const run = this.store.getRun(request.run_id);
    if (!run) return fail("not_found", `Run ${request.run_id} not found`);
    switch (run.status) {
      case "cancelled":
        return fail("run_not_continuable", `Run ${run.id} was cancelled and cannot be continued in place`);
      case "completed":
      case "error":
        return fail("invalid_request", "Continuing a finished run (a fork) is not supported yet", {
          fields: [{ path: "run_id", message: `run is ${run.status}; continuing a finished run is not supported yet` }],
        });
      case "pending":
      case "running":
        return this.busyFailure() ?? fail("session_busy", "The run is already running");
      case "paused":
        break;
    }
    const problem = checkToolResults(run.required_actions, request.tool_results);
    if (problem) return fail("invalid_request", problem.message, { fields: [problem] });

    const stream = request.stream ? runEventStream(this.hub, run.id) : null;
    const stopped = this.stopOf(run.id);
    const answered = run.required_actions;
    run.status = "running";
    run.required_actions = [];
    run.metrics.tool_calls += answered.length;
    this.commit(() => {
      for (const result of request.tool_results) {
        this.store.recordToolResult({
          tool_call_id: result.tool_call_id,
          run_id: run.id,
          output: result.output,
          is_error: result.is_error ?? false,
        });
      }
      return [this.saveRun(run)];
    });
    this.emit(run, "run_continued", { from_checkpoint: null });
    for (const result of request.tool_results) {
      const name = answered.find((a) => a.tool_call_id === result.tool_call_id)?.name;
      this.emit(run, result.is_error ? "tool_call_error" : "tool_call_completed", {
        tool_call_id: result.tool_call_id,
        name,
        ...(result.is_error ? { error: result.output } : { output: result.output, duration_ms: null }),
      });
    }
    this.drive(run.id);
    return this.answer(run.id, stream, stopped);
  }

  /** Cancels a run; idempotent. The turn is free as soon as this answers. */
  async cancelRun(identity: SessionIdentity, runId: string): Promise<Result<{ run: Run }>> {
    if (!this.store.isInitialized()) await this.rebuild(identity);
    const run = this.store.getRun(runId);
    if (!run) return fail("not_found", `Run ${runId} not found`);
    if (isActive(run.status)) {
      this.drivers.get(runId)?.abort();
      await this.finish(run, "cancelled", {}, { reason: "cancelled by request" });
    }
    return { ok: true, run: renderRun(this.store.getRun(runId) ?? run) };
  }

  async getRun(identity: SessionIdentity, runId: string): Promise<Result<{ run: Run }>> {
    if (!this.store.isInitialized()) await this.rebuild(identity);
    this.wake();
    const run = this.store.getRun(runId);
    return run ? { ok: true, run: renderRun(run) } : fail("not_found", `Run ${runId} not found`);
  }

  async getSession(identity: SessionIdentity): Promise<Result<{ session: SessionView }>> {
    if (!this.store.isInitialized()) await this.rebuild(identity);
    this.wake();
    const agentId = this.store.getMeta("agent_id");
    if (agentId === null) return fail("not_found", `Session ${identity.session_id} not found`);
    return {
      ok: true,
      session: summarizeSession(identity.session_id, agentId, this.store),
    };
  }

  /** The transcript up to the end of `runId` (all of it when absent). */
  async getTranscript(identity: SessionIdentity, runId: string | null): Promise<Result<{ messages: StoredMessage[] }>> {
    if (!this.store.isInitialized()) await this.rebuild(identity);
    if (this.store.getMeta("agent_id") === null) return fail("not_found", `Session ${identity.session_id} not found`);
    const all = this.store.messages();
    if (runId === null) return { ok: true, messages: all };
    if (!this.store.getRun(runId)) return fail("not_found", `Run ${runId} not found`);
    const last = all.reduce((end, m) => (m.run_id === runId ? m.index : end), -1);
    return { ok: true, messages: all.filter((m) => m.index <= last) };
  }

  /** Cancels the session's run and removes all of its data, here and in D1. */
  async deleteSession(identity: SessionIdentity): Promise<Result<object>> {
    if (!this.store.isInitialized()) await this.rebuild(identity);
    if (this.store.getMeta("agent_id") === null) return fail("not_found", `Session ${identity.session_id} not found`);
    const active = this.store.activeRun();
    if (active) {
      this.drivers.get(active.id)?.abort();
      await this.finish(active, "cancelled", {}, { reason: "session deleted" });
    }
    await this.flushing;
    this.store.clearOutbox();
    const statements = deleteSessionRows(identity.tenant, identity.session_id);
    await this.env.DB.batch(statements.map((s) => this.env.DB.prepare(s.sql).bind(...s.params)));
    this.drivers.clear();
    this.nextSeqValue = null;
    this.events.reset();
    this.sockets.closeAll(1000, "session deleted");
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    return { ok: true };
  }

  /** A run's stored events after `after` (API.md, Events of a run). */
  async readEvents(identity: SessionIdentity, runId: string, after: number): Promise<Result<{ events: RunEvent[] }>> {
    if (!this.store.isInitialized()) await this.rebuild(identity);
    if (!this.store.getRun(runId)) return fail("not_found", `Run ${runId} not found`);
    return { ok: true, events: await this.events.readAll(identity, runId, after) };
  }

  /**
   * SSE of a run's stored events after `after`, then of its live events until its current
   * stretch ends (event-stream.ts); a stretch that has ended closes after the replay.
   */
  async watchEvents(identity: SessionIdentity, runId: string, after: number): Promise<Result<{ stream: ReadableStream<Uint8Array> }>> {
    if (!this.store.isInitialized()) await this.rebuild(identity);
    this.wake();
    if (!this.store.getRun(runId)) return fail("not_found", `Run ${runId} not found`);
    return { ok: true, stream: this.replayOf(identity, runId, after) };
  }

  private replayOf(identity: SessionIdentity, runId: string, after: number): ReadableStream<Uint8Array> {
    return replayStream({
      hub: this.hub,
      runId,
      after,
      read: (from) => this.events.read(identity, runId, from),
      isLive: () => {
        const status = this.store.getRun(runId)?.status;
        return this.events.isOpen(runId) || status === "pending" || status === "running";
      },
    });
  }

  /** Only the WebSocket upgrade of `GET /v1/sessions/{id}/ws` reaches the object over fetch. */
  override async fetch(request: Request): Promise<Response> {
    const identity = upgradeIdentity(request);
    if (!identity) return new Response("Expected a WebSocket upgrade", { status: 426 });
    if (!this.store.isInitialized()) await this.rebuild(identity);
    this.wake();
    return this.sockets.accept(identity);
  }

  /** A client message; after hibernation the object was just rebuilt (constructor) to take it. */
  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    const identity = this.sockets.identityOf(ws);
    if (!identity) return ws.close(1011, "unknown socket");
    if (!this.store.isInitialized()) await this.rebuild(identity);
    this.wake();
    await this.sockets.receive(ws, message, (after) => this.events.read(identity, null, after));
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    this.sockets.closed(ws, code, reason);
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    this.sockets.closed(ws, 1011, "connection error");
  }

  /**
   * One alarm, many timers (timers.ts). Alarms are delivered at least once and the platform
   * retries a handler that throws, outside Agentry's policy: so this catches everything, and
   * every timer's work is idempotent.
   */
  override async alarm(): Promise<void> {
    try {
      if (!this.store.isInitialized()) return;
      for (const timer of this.timers.takeDue()) {
        if (timer === "outbox") await this.flush();
        if (timer === "queue_fallback") this.startPending("queue fallback timer");
        if (timer === "retry") this.endRetryWait();
        if (timer === "watchdog") this.resumeStalledRun();
      }
      this.timers.sync();
    } catch (error) {
      log({ event: "alarm_failed", message: error instanceof Error ? error.message : String(error) });
      this.setTimer("outbox", Date.now() + OUTBOX_RETRY_MS);
    }
  }

  // ── internals ──────────────────────────────────────────────────────────────────────

  private async rebuild(identity: SessionIdentity): Promise<void> {
    await this.ctx.blockConcurrencyWhile(async () => {
      if (this.store.isInitialized()) return;
      this.nextSeqValue = null;
      this.events.reset();
      const counts = await rebuildFromMirror(this.store, this.env.DB, identity.tenant, identity.session_id);
      if (counts.runs > 0) log({ event: "session_rebuilt", session_id: identity.session_id, ...counts });
      if (this.store.activeRun()?.status === "running") this.setTimer("watchdog", Date.now());
    });
  }

  private busyFailure() {
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
  private wake(): void {
    const active = this.store.activeRun();
    if (active?.status === "running" && !this.drivers.has(active.id) && !this.launching.has(active.id) && !isWaitingForRetry(active)) {
      log({ event: "run_resumed", run_id: active.id, reason: "object restarted" });
      this.drive(active.id);
    }
  }

  /** Sends the background run to the queue. A failed send is left to the fallback timer. */
  private async enqueue(run: RunRecord): Promise<void> {
    const message: RunMessage = { tenant: this.tenant(), session_id: run.session_id, run_id: run.id };
    try {
      await this.env.RUNS.send(message);
    } catch (error) {
      log({ event: "queue_message", run_id: run.id, outcome: `send failed: ${error instanceof Error ? error.message : String(error)}` });
    }
  }

  private queueFallbackMs(): number {
    const seconds = Number(this.env.QUEUE_FALLBACK_SECONDS ?? "30");
    return (Number.isFinite(seconds) && seconds > 0 ? seconds : 30) * 1000;
  }

  /** Resumes the active run when no invocation drives it (the one that did has died). */
  private resumeStalledRun(): void {
    const active = this.store.activeRun();
    if (active?.status !== "running" || this.launching.has(active.id)) return;
    if (isWaitingForRetry(active)) {
      this.setTimer("retry", active.retry_at ?? Date.now());
    } else if (this.drivers.has(active.id)) {
      this.setTimer("watchdog", Date.now() + WATCHDOG_MS);
    } else {
      this.drive(active.id);
    }
  }

  /** The retry alarm rang: the wait is over (an alarm never rings early), the next attempt starts. */
  private endRetryWait(): void {
    const active = this.store.activeRun();
    if (active?.status !== "running") return;
    if (active.retry_at) {
      active.retry_at = null;
      this.commit(() => [this.saveRun(active)]);
    }
    this.resumeStalledRun();
  }

  /** Starts the pending background run, if there is one; a second start does nothing. */
  private startPending(trigger: string): boolean {
    const run = this.store.activeRun();
    if (run?.status !== "pending") return false;
    const now = nowIso();
    run.status = "running";
    run.started_at = now;
    this.commit(() => [this.saveRun(run)]);
    this.setTimer("queue_fallback", null);
    log({ event: "run_started", run_id: run.id, trigger });
    this.emit(run, "run_started", { agent_id: run.agent_id, agent_version: run.agent_version });
    this.drive(run.id);
    this.host.flushSoon();
    return true;
  }

  /** Records a failed model call's attempt and waits on the alarm before the next one. */
  private scheduleRetry(run: RunRecord, failure: ProviderError, delayMs: number, step: number): void {
    const failedAttempt = run.call_attempt ?? 1;
    run.attempts += 1;
    run.metrics.retries += 1;
    run.call_attempt = failedAttempt + 1;
    run.retry_at = Date.now() + delayMs;
    this.commit(() => [this.saveRun(run)]);
    this.setTimer("retry", run.retry_at);
    this.setTimer("watchdog", run.retry_at + WATCHDOG_MS);
    this.emit(run, "retry", {
      step,
      attempt: failedAttempt,
      delay_ms: delayMs,
      error: { type: failure.type, message: failure.message, status: failure.status },
    });
    this.host.flushSoon();
  }

  private drive(runId: string): void {
    if (this.drivers.has(runId)) return;
    const abort = new AbortController();
    this.drivers.set(runId, abort);
    driveRun(this.host, runId, abort.signal)
      .catch(async (error: unknown) => {
        log({ event: "unhandled_error", message: error instanceof Error ? error.message : String(error) });
        try {
          const run = this.store.getRun(runId);
          if (run?.status === "running") {
            await this.finish(run, "error", { error: { type: "internal", message: "Internal error", retryable: false } });
          }
        } catch {
          // The session was deleted under the run.
        }
      })
      .finally(() => {
        if (this.drivers.get(runId) === abort) this.drivers.delete(runId);
      });
  }

  /** Resolves when the run's current stretch ends (its terminal event). */
  private stopOf(runId: string): Promise<void> {
    return new Promise((resolve) => {
      const unsubscribe = this.hub.subscribe((event) => {
        if (event.run_id === runId && isTerminal(event.type)) {
          unsubscribe();
          resolve();
        }
      });
    });
  }

  private async answer(
    runId: string,
    stream: ReadableStream<Uint8Array> | null,
    stopped: Promise<void>,
    waitForStop = true,
  ): Promise<RunAnswer> {
    const current = this.store.getRun(runId);
    if (!current) return fail("not_found", `Run ${runId} not found`);
    if (stream || !waitForStop) return { ok: true, run: renderRun(current), stream };
    if (current.status === "running" || current.status === "pending") await stopped;
    try {
      return { ok: true, run: renderRun(this.store.getRun(runId) ?? current), stream: null };
    } catch {
      return fail("not_found", `Run ${runId} not found: its session was deleted`);
    }
  }

  private async finish(
    run: RunRecord,
    status: Exclude<RunStatus, "pending" | "running">,
    patch: Partial<RunRecord>,
    eventData: Record<string, unknown> = {},
  ): Promise<void> {
    const now = nowIso();
    Object.assign(run, patch, { status });
    if (status !== "paused") {
      run.finished_at = now;
      run.metrics.duration_ms = Date.parse(now) - Date.parse(run.started_at ?? run.created_at);
    }
    this.commit(() => {
      // The turn is released before the terminal answer or event goes out (API.md).
      if (status !== "paused" && this.store.getMeta("active_run_id") === run.id) this.store.setMeta("active_run_id", null);
      this.store.setMeta("updated_at", now);
      return [this.saveRun(run), this.mirrorSessionRow()];
    });
    for (const timer of ["watchdog", "retry", "queue_fallback"] as const) this.setTimer(timer, null);
    // Every finished run is in D1 before its terminal event.
    await this.flush();
    const data: Record<RunStatus, () => Record<string, unknown>> = {
      completed: () => ({ output: run.output, metrics: run.metrics }),
      error: () => ({ error: run.error }),
      cancelled: () => ({ reason: eventData.reason ?? "cancelled" }),
      paused: () => ({ required_actions: run.required_actions }),
      pending: () => ({}),
      running: () => ({}),
    };
    const type: Record<typeof status, RunEventType> = {
      completed: "run_completed",
      error: "run_error",
      cancelled: "run_cancelled",
      paused: "run_paused",
    };
    this.emit(run, type[status], data[status]());
    log({ event: "run_finished", run_id: run.id, status, duration_ms: run.metrics.duration_ms });
  }

  private emit(run: RunRecord, type: RunEventType, data: Record<string, unknown>): void {
    const event: RunEvent = { seq: this.nextSeq(), type, run_id: run.id, session_id: run.session_id, created_at: nowIso(), data };
    // A terminal event is stored before anyone sees it: a client that saw a run end can replay it at once.
    if (this.events.record(event, run.agent.store_events !== false)) this.commit(() => []);
    this.hub.publish(event);
    this.sockets.broadcast(event);
    if (isTerminal(type)) void this.flush();
  }

  /** Seqs are handed out from a reserve persisted ahead of use, so none is ever reused. */
  private nextSeq(): number {
    const ceiling = Number(this.store.getMeta("seq_ceiling") ?? "0");
    if (this.nextSeqValue === null || this.nextSeqValue <= 0) this.nextSeqValue = ceiling + 1;
    const seq = this.nextSeqValue;
    if (seq > ceiling) this.store.setMeta("seq_ceiling", String(seq + SEQ_RESERVE - 1));
    this.nextSeqValue = seq + 1;
    return seq;
  }

  /** Applies `change` and writes the buffered events, with their D1 statements, in one transaction. */
  private commit(change: () => MirrorStatement[]): void {
    this.ctx.storage.transactionSync(() => {
      this.store.enqueueMirror(change());
      for (const statements of this.events.persist()) this.store.enqueueMirror(statements);
    });
    this.events.persisted();
  }

  private appendMessage(run: RunRecord, role: StoredMessage["role"], content: Block[]): MirrorStatement {
    const message: StoredMessage = { index: this.store.nextMessageIndex(), run_id: run.id, role, content, created_at: nowIso() };
    this.store.appendMessage(message);
    return mirrorMessage(this.tenant(), run.session_id, message);
  }

  private saveRun(run: RunRecord): MirrorStatement {
    this.store.putRun(run);
    return mirrorRun(this.tenant(), run, nowIso());
  }

  private mirrorSessionRow(): MirrorStatement {
    const now = nowIso();
    return mirrorSession(this.tenant(), {
      id: this.store.getMeta("session_id") ?? "",
      agent_id: this.store.getMeta("agent_id") ?? "",
      created_at: this.store.getMeta("created_at") ?? now,
      updated_at: this.store.getMeta("updated_at") ?? now,
      last_seq: Number(this.store.getMeta("seq_ceiling") ?? "0"),
    });
  }

  private tenant(): string {
    return this.store.getMeta("tenant") ?? "";
  }

  /** Copies the outbox to D1, one batch at a time; a failure is retried on the alarm. */
  private flush(): Promise<void> {
    // Events emitted since the last step (a retry's, a run_started) are written first.
    if (this.events.pending && this.store.isInitialized()) this.commit(() => []);
    this.flushing = this.flushing.then(() => this.drainOutbox());
    return this.flushing;
  }

  private async drainOutbox(): Promise<void> {
    let entries;
    try {
      entries = this.store.outbox();
    } catch {
      return; // storage was deleted with the session
    }
    if (entries.length === 0) return;
    const db = this.env.DB;
    try {
      await db.batch(entries.flatMap((e) => e.statements.map((s) => db.prepare(s.sql).bind(...s.params))));
      this.store.removeFromOutbox(entries.map((e) => e.id));
    } catch (error) {
      log({ event: "outbox_failed", session_id: this.store.getMeta("session_id") ?? "", message: error instanceof Error ? error.message : String(error) });
      this.setTimer("outbox", Date.now() + OUTBOX_RETRY_MS);
    }
  }

  private setTimer(name: TimerName, dueAt: number | null): void {
    this.timers.set(name, dueAt);
  }
}
