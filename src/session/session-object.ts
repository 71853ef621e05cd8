import { DurableObject } from "cloudflare:workers";
import type { Block } from "../core/messages";
import { newId, nowIso } from "../core/ids";
import { log } from "../core/log";
import type { Env } from "../env";
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
import { emptyMetrics, isActive, renderRun, type Run, type RunRecord, type RunStatus } from "./run-record";
import { summarizeSession } from "./session-view";
import { SessionStore, type MirrorStatement, type StoredMessage } from "./storage";
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
  private nextSeqValue: number | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new SessionStore(ctx.storage.sql);
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
    };
  }

  // ── RPC methods (called by the Worker) ─────────────────────────────────────────────

  /** Starts a turn. The lock is checked and taken synchronously, with no await in between. */
  async startRun(request: StartRunRequest): Promise<RunAnswer> {
    if (!this.store.isInitialized()) await this.rebuild(request);
    const owner = this.store.getMeta("agent_id");
    if (owner !== null && owner !== request.agent.id) return fail("not_found", `Session ${request.session_id} not found`);
    const busy = this.busyFailure();
    if (busy) return busy;

    const now = nowIso();
    const run: RunRecord = {
      id: newId("run"),
      agent_id: request.agent.id,
      session_id: request.session_id,
      status: "running",
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
      started_at: now,
      finished_at: null,
      agent: request.agent,
      first_message: this.store.nextMessageIndex(),
    };
    const stream = request.stream ? runEventStream(this.hub, run.id) : null;
    const stopped = this.stopOf(run.id);
    this.commit(() => {
      if (owner === null) {
        this.store.setMeta("agent_id", request.agent.id);
        this.store.setMeta("created_at", now);
      }
      this.store.setMeta("active_run_id", run.id);
      this.store.setMeta("updated_at", now);
      return [this.mirrorSessionRow(), this.appendMessage(run, "user", run.input), this.saveRun(run)];
    });
    // The run's row reaches D1 before anyone learns its id (GET …/runs/{id} finds it anywhere).
    await this.flush();
    if (this.store.getRun(run.id)?.status === "running") {
      this.emit(run, "run_started", { agent_id: run.agent_id, agent_version: run.agent_version });
      this.drive(run.id);
    }
    return this.answer(run.id, stream, stopped);
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
    const run = this.store.getRun(runId);
    return run ? { ok: true, run: renderRun(run) } : fail("not_found", `Run ${runId} not found`);
  }

  async getSession(identity: SessionIdentity): Promise<Result<{ session: SessionView }>> {
    if (!this.store.isInitialized()) await this.rebuild(identity);
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
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    return { ok: true };
  }

  /** One alarm, many timers: the watchdog resumes a stalled run, the outbox retries D1. */
  override async alarm(): Promise<void> {
    try {
      if (!this.store.isInitialized()) return;
      const now = Date.now();
      for (const timer of this.store.timers()) {
        if (timer.due_at > now) continue;
        this.store.setTimer(timer.name, null);
        if (timer.name === "outbox") await this.flush();
        if (timer.name === "watchdog") this.resumeStalledRun();
      }
      this.syncAlarm();
    } catch (error) {
      // The platform would retry a throwing alarm outside Agentry's policy: log and re-arm instead.
      log({ event: "alarm_failed", message: error instanceof Error ? error.message : String(error) });
      this.setTimer("outbox", Date.now() + OUTBOX_RETRY_MS);
    }
  }

  // ── internals ──────────────────────────────────────────────────────────────────────

  private async rebuild(identity: SessionIdentity): Promise<void> {
    await this.ctx.blockConcurrencyWhile(async () => {
      if (this.store.isInitialized()) return;
      this.nextSeqValue = null;
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

  private resumeStalledRun(): void {
    const active = this.store.activeRun();
    if (active?.status !== "running") return;
    if (this.drivers.has(active.id)) this.setTimer("watchdog", Date.now() + WATCHDOG_MS);
    else this.drive(active.id);
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

  private async answer(runId: string, stream: ReadableStream<Uint8Array> | null, stopped: Promise<void>): Promise<RunAnswer> {
    const current = this.store.getRun(runId);
    if (!current) return fail("not_found", `Run ${runId} not found`);
    if (stream) return { ok: true, run: renderRun(current), stream };
    if (current.status === "running") await stopped;
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
    this.setTimer("watchdog", null);
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
    this.hub.publish(event);
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

  private commit(change: () => MirrorStatement[]): void {
    this.ctx.storage.transactionSync(() => this.store.enqueueMirror(change()));
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

  private setTimer(name: "watchdog" | "outbox", dueAt: number | null): void {
    this.store.setTimer(name, dueAt);
    this.syncAlarm();
  }

  private syncAlarm(): void {
    const first = this.store.timers()[0];
    if (first) void this.ctx.storage.setAlarm(first.due_at);
    else void this.ctx.storage.deleteAlarm();
  }
}
