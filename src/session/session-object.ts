import { DurableObject } from "cloudflare:workers";
import { newId, nowIso } from "../core/ids";
import { log } from "../core/log";
import type { Env } from "../env";
import { runEventStream, type RunEvent } from "./events";
import { deleteSessionRows } from "./mirror";
import type { ContinueRunRequest, Result, RunAnswer, SessionIdentity, SessionView, StartRunRequest } from "./protocol";
import { emptyMetrics, isActive, isWaitingForRetry, renderRun, type Run, type RunRecord } from "./run-record";
import { fail, OUTBOX_RETRY_MS, SessionCore } from "./session-core";
import { summarizeSession } from "./session-view";
import { upgradeIdentity } from "./sockets";
import type { StoredMessage } from "./storage";
import { checkToolResults } from "./tool-results";

/**
 * The Session Durable Object: the only writer of one session. It holds the turn lock, runs
 * the agent loop, fans events out and mirrors everything to D1 (DESIGN.md). Its methods are
 * the RPC surface the Worker calls; the mechanics live in SessionCore (session-core.ts).
 */
export class SessionObject extends DurableObject<Env> {
  private readonly core: SessionCore;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.core = new SessionCore(ctx, env);
  }

  // ── RPC methods (called by the Worker) ─────────────────────────────────────────────

  /**
   * Starts a turn. The lock is checked and taken synchronously, with no await in between.
   * A `run_id` the object already has (an `Idempotency-Key` retry) answers that run again
   * instead of starting another.
   */
  async startRun(request: StartRunRequest): Promise<RunAnswer> {
    if (!this.core.store.isInitialized()) await this.core.rebuild(request);
    this.core.wake();
    const existing = request.run_id ? this.core.store.getRun(request.run_id) : null;
    if (existing) {
      // A retried POST (same Idempotency-Key) is answered the run it created, its events from the start.
      const replay = request.stream ? this.core.replayOf(request, existing.id, 0) : null;
      return this.core.answer(existing.id, replay, this.core.stopOf(existing.id), !request.background);
    }
    const owner = this.core.store.getMeta("agent_id");
    if (owner !== null && owner !== request.agent.id) return fail("not_found", `Session ${request.session_id} not found`);
    const busy = this.core.busyFailure();
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
      first_message: this.core.store.nextMessageIndex(),
    };
    const stream = request.stream ? runEventStream(this.core.hub, run.id) : null;
    const stopped = this.core.stopOf(run.id);
    this.core.launching.add(run.id);
    this.core.commit(() => {
      if (owner === null) {
        this.core.store.setMeta("agent_id", request.agent.id);
        this.core.store.setMeta("created_at", now);
      }
      this.core.store.setMeta("active_run_id", run.id);
      this.core.store.setMeta("updated_at", now);
      return [this.core.mirrorSessionRow(), this.core.appendMessage(run, "user", run.input), this.core.saveRun(run)];
    });
    if (request.background) this.core.setTimer("queue_fallback", Date.now() + this.core.queueFallbackMs());
    try {
      // The run's row reaches D1 before anyone learns its id (GET …/runs/{id} finds it anywhere).
      await this.core.flush();
      if (request.background) await this.core.enqueue(run);
    } finally {
      this.core.launching.delete(run.id);
    }
    if (!request.background && this.core.store.getRun(run.id)?.status === "running") {
      this.core.emit(run, "run_started", { agent_id: run.agent_id, agent_version: run.agent_version });
      this.core.drive(run.id);
    }
    return this.core.answer(run.id, stream, stopped, !request.background);
  }

  /**
   * Executes a pending background run: called by the queue consumer. Queues deliver at least
   * once, so a run that is already running or finished is left alone.
   */
  async executeRun(identity: SessionIdentity, runId: string): Promise<Result<{ started: boolean }>> {
    if (!this.core.store.isInitialized()) await this.core.rebuild(identity);
    const run = this.core.store.getRun(runId);
    if (!run) return fail("not_found", `Run ${runId} not found`);
    const started = run.status === "pending" && this.core.store.activeRun()?.id === runId && this.core.startPending("queue");
    if (!started) this.core.wake();
    return { ok: true, started };
  }

  /** Ends a pending run whose queue message was dead-lettered; a run that started is left alone. */
  async failPendingRun(identity: SessionIdentity, runId: string, reason: string): Promise<Result<{ run: Run }>> {
    if (!this.core.store.isInitialized()) await this.core.rebuild(identity);
    const run = this.core.store.getRun(runId);
    if (!run) return fail("not_found", `Run ${runId} not found`);
    if (run.status === "pending") {
      await this.core.finish(run, "error", { error: { type: "internal", message: reason, retryable: false } });
    }
    return { ok: true, run: renderRun(this.core.store.getRun(runId) ?? run) };
  }

  /**
   * The Cron sweeper's call for a run that the mirror shows without progress: resume it, or
   * end it after too many sweeps found it stuck.
   */
  async sweepRun(identity: SessionIdentity, runId: string, maxSweeps: number): Promise<Result<{ action: string }>> {
    if (!this.core.store.isInitialized()) await this.core.rebuild(identity);
    await this.core.flush();
    const run = this.core.store.getRun(runId);
    if (!run || !isActive(run.status) || run.status === "paused") return { ok: true, action: "none" };
    if (this.core.drivers.has(run.id) || isWaitingForRetry(run)) return { ok: true, action: "alive" };
    run.sweeps = (run.sweeps ?? 0) + 1;
    if (run.sweeps > maxSweeps) {
      await this.core.finish(run, "error", {
        error: { type: "internal", message: `The run made no progress after ${maxSweeps} recovery attempts`, retryable: false },
      });
      return { ok: true, action: "ended" };
    }
    this.core.commit(() => [this.core.saveRun(run)]);
    log({ event: "run_resumed", run_id: run.id, reason: "cron sweep" });
    if (run.status === "pending") this.core.startPending("cron sweep");
    else this.core.drive(run.id);
    return { ok: true, action: "resumed" };
  }

  /** The run once it has stopped, or after `waitMs` with its current state (a long-poll). */
  async waitForRun(identity: SessionIdentity, runId: string, waitMs: number): Promise<Result<{ run: Run }>> {
    if (!this.core.store.isInitialized()) await this.core.rebuild(identity);
    this.core.wake();
    const run = this.core.store.getRun(runId);
    if (!run) return fail("not_found", `Run ${runId} not found`);
    if (run.status === "pending" || run.status === "running") {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([this.core.stopOf(runId), new Promise((resolve) => (timer = setTimeout(resolve, waitMs)))]);
      clearTimeout(timer);
    }
    return { ok: true, run: renderRun(this.core.store.getRun(runId) ?? run) };
  }

  /** Resumes a paused run in place with the client's tool results. */
  async continueRun(request: ContinueRunRequest): Promise<RunAnswer> {
    if (!this.core.store.isInitialized()) await this.core.rebuild(request);
    const run = this.core.store.getRun(request.run_id);
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
        return this.core.busyFailure() ?? fail("session_busy", "The run is already running");
      case "paused":
        break;
    }
    const problem = checkToolResults(run.required_actions, request.tool_results);
    if (problem) return fail("invalid_request", problem.message, { fields: [problem] });

    const stream = request.stream ? runEventStream(this.core.hub, run.id) : null;
    const stopped = this.core.stopOf(run.id);
    const answered = run.required_actions;
    run.status = "running";
    run.required_actions = [];
    run.metrics.tool_calls += answered.length;
    this.core.commit(() => {
      for (const result of request.tool_results) {
        this.core.store.recordToolResult({
          tool_call_id: result.tool_call_id,
          run_id: run.id,
          output: result.output,
          is_error: result.is_error ?? false,
        });
      }
      return [this.core.saveRun(run)];
    });
    this.core.emit(run, "run_continued", { from_checkpoint: null });
    for (const result of request.tool_results) {
      const name = answered.find((a) => a.tool_call_id === result.tool_call_id)?.name;
      this.core.emit(run, result.is_error ? "tool_call_error" : "tool_call_completed", {
        tool_call_id: result.tool_call_id,
        name,
        ...(result.is_error ? { error: result.output } : { output: result.output, duration_ms: null }),
      });
    }
    this.core.drive(run.id);
    return this.core.answer(run.id, stream, stopped);
  }

  /** Cancels a run; idempotent. The turn is free as soon as this answers. */
  async cancelRun(identity: SessionIdentity, runId: string): Promise<Result<{ run: Run }>> {
    if (!this.core.store.isInitialized()) await this.core.rebuild(identity);
    const run = this.core.store.getRun(runId);
    if (!run) return fail("not_found", `Run ${runId} not found`);
    if (isActive(run.status)) {
      this.core.drivers.get(runId)?.abort();
      await this.core.finish(run, "cancelled", {}, { reason: "cancelled by request" });
    }
    return { ok: true, run: renderRun(this.core.store.getRun(runId) ?? run) };
  }

  async getRun(identity: SessionIdentity, runId: string): Promise<Result<{ run: Run }>> {
    if (!this.core.store.isInitialized()) await this.core.rebuild(identity);
    this.core.wake();
    const run = this.core.store.getRun(runId);
    return run ? { ok: true, run: renderRun(run) } : fail("not_found", `Run ${runId} not found`);
  }

  async getSession(identity: SessionIdentity): Promise<Result<{ session: SessionView }>> {
    if (!this.core.store.isInitialized()) await this.core.rebuild(identity);
    this.core.wake();
    const agentId = this.core.store.getMeta("agent_id");
    if (agentId === null) return fail("not_found", `Session ${identity.session_id} not found`);
    return {
      ok: true,
      session: summarizeSession(identity.session_id, agentId, this.core.store),
    };
  }

  /** The transcript up to the end of `runId` (all of it when absent). */
  async getTranscript(identity: SessionIdentity, runId: string | null): Promise<Result<{ messages: StoredMessage[] }>> {
    if (!this.core.store.isInitialized()) await this.core.rebuild(identity);
    if (this.core.store.getMeta("agent_id") === null) return fail("not_found", `Session ${identity.session_id} not found`);
    const all = this.core.store.messages();
    if (runId === null) return { ok: true, messages: all };
    if (!this.core.store.getRun(runId)) return fail("not_found", `Run ${runId} not found`);
    const last = all.reduce((end, m) => (m.run_id === runId ? m.index : end), -1);
    return { ok: true, messages: all.filter((m) => m.index <= last) };
  }

  /** Cancels the session's run and removes all of its data, here and in D1. */
  async deleteSession(identity: SessionIdentity): Promise<Result<object>> {
    if (!this.core.store.isInitialized()) await this.core.rebuild(identity);
    if (this.core.store.getMeta("agent_id") === null) return fail("not_found", `Session ${identity.session_id} not found`);
    const active = this.core.store.activeRun();
    if (active) {
      this.core.drivers.get(active.id)?.abort();
      await this.core.finish(active, "cancelled", {}, { reason: "session deleted" });
    }
    await this.core.flushing;
    this.core.store.clearOutbox();
    const statements = deleteSessionRows(identity.tenant, identity.session_id);
    await this.env.DB.batch(statements.map((s) => this.env.DB.prepare(s.sql).bind(...s.params)));
    this.core.drivers.clear();
    this.core.nextSeqValue = null;
    this.core.events.reset();
    this.core.sockets.closeAll(1000, "session deleted");
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    return { ok: true };
  }

  /** A run's stored events after `after` (API.md, Events of a run). */
  async readEvents(identity: SessionIdentity, runId: string, after: number): Promise<Result<{ events: RunEvent[] }>> {
    if (!this.core.store.isInitialized()) await this.core.rebuild(identity);
    if (!this.core.store.getRun(runId)) return fail("not_found", `Run ${runId} not found`);
    return { ok: true, events: await this.core.events.readAll(identity, runId, after) };
  }

  /**
   * SSE of a run's stored events after `after`, then of its live events until its current
   * stretch ends (event-stream.ts); a stretch that has ended closes after the replay.
   */
  async watchEvents(identity: SessionIdentity, runId: string, after: number): Promise<Result<{ stream: ReadableStream<Uint8Array> }>> {
    if (!this.core.store.isInitialized()) await this.core.rebuild(identity);
    this.core.wake();
    if (!this.core.store.getRun(runId)) return fail("not_found", `Run ${runId} not found`);
    return { ok: true, stream: this.core.replayOf(identity, runId, after) };
  }


  /** Only the WebSocket upgrade of `GET /v1/sessions/{id}/ws` reaches the object over fetch. */
  override async fetch(request: Request): Promise<Response> {
    const identity = upgradeIdentity(request);
    if (!identity) return new Response("Expected a WebSocket upgrade", { status: 426 });
    if (!this.core.store.isInitialized()) await this.core.rebuild(identity);
    this.core.wake();
    return this.core.sockets.accept(identity);
  }

  /** A client message; after hibernation the object was just rebuilt (constructor) to take it. */
  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    const identity = this.core.sockets.identityOf(ws);
    if (!identity) return ws.close(1011, "unknown socket");
    if (!this.core.store.isInitialized()) await this.core.rebuild(identity);
    this.core.wake();
    await this.core.sockets.receive(ws, message, (after) => this.core.events.read(identity, null, after));
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    this.core.sockets.closed(ws, code, reason);
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    this.core.sockets.closed(ws, 1011, "connection error");
  }

  /**
   * One alarm, many timers (timers.ts). Alarms are delivered at least once and the platform
   * retries a handler that throws, outside Agentry's policy: so this catches everything, and
   * every timer's work is idempotent.
   */
  override async alarm(): Promise<void> {
    try {
      if (!this.core.store.isInitialized()) return;
      for (const timer of this.core.timers.takeDue()) {
        if (timer === "outbox") await this.core.flush();
        if (timer === "queue_fallback") this.core.startPending("queue fallback timer");
        if (timer === "retry") this.core.endRetryWait();
        if (timer === "watchdog") this.core.resumeStalledRun();
      }
      this.core.timers.sync();
    } catch (error) {
      log({ event: "alarm_failed", message: error instanceof Error ? error.message : String(error) });
      this.core.setTimer("outbox", Date.now() + OUTBOX_RETRY_MS);
    }
  }
}
