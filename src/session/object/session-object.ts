import { meterAlarm } from "../../core/storage-meter";
import { DurableObject } from "cloudflare:workers";
import { errorMessage } from "../../core/errors";
import { newId } from "../../core/ids";
import { stopDetails } from "../../budgets";
import { steerIdOf } from "./steers";
import { log } from "../../core/log";
import type { SessionEnv } from "../session-env";
import type { RunEvent } from "../stream/events";
import type {
  CompactionReport,
  ContinueRunRequest,
  Result,
  RunAnswer,
  SessionIdentity,
  SessionView,
  StartRunRequest,
} from "../../run-model/session-protocol";
import type { Agent, OnBusy } from "../../agents";
import { branchOf, messagesOf } from "../transcript/branch-messages";
import { estimateTokens, toModelMessages, type TranscriptMessage } from "../transcript/compaction";
import { summarizeOlderMessages } from "../transcript/compactor";
import { compactedBranch } from "../transcript/model-history";
import { planBranch } from "../transcript/branch-plan";
import { isGoingOn, renderRun, type Checkpoint, type Run, type RunRecord } from "../../run-model/run-record";
import { RunLifecycle } from "./run-lifecycle";
import { deletingFailure, fail, OUTBOX_RETRY_MS, SessionCore, type Refusal } from "./session-core";
import { summarizeSession } from "./session-summary";
import { upgradeIdentity } from "../stream/sockets";
import { checkAnswers } from "../run/tool-results-check";

/**
 * The Session Durable Object: the only writer of one session. It holds the turn lock, runs
 * the agent loop, fans events out and mirrors everything to D1 (docs/architecture.md). Its
 * methods are the RPC surface the Worker calls: each enters (`enter`), checks the request, and
 * hands the work to RunLifecycle (a run's moves, run-lifecycle.ts) or SessionCore (storage,
 * events and the mirror, session-core.ts).
 */
export class SessionObject extends DurableObject<SessionEnv> {
  private readonly core: SessionCore;
  private readonly life: RunLifecycle;

  constructor(ctx: DurableObjectState, env: SessionEnv) {
    super(ctx, env);
    this.core = new SessionCore(ctx, env);
    this.life = new RunLifecycle(this.core);
  }

  // ── RPC methods (called by the Worker) ─────────────────────────────────────────────

  /**
   * Starts a turn. The lock is checked and taken synchronously, with no await in between.
   * A `run_id` the object already has (an `Idempotency-Key` retry) answers that run again
   * instead of starting another.
   */
  async startRun(request: StartRunRequest): Promise<RunAnswer> {
    const refused = await this.enter(request, { work: true, isNew: request.new_session === true });
    if (refused) return refused;
    const runId = request.run_id ?? newId("run");
    // A turn on a spent budget is refused before anything is stored (a retried request is answered its run);
    // the Worker asked the ledger already, beside its read of the agent, unless it could not (budget_checked).
    const replayed = this.core.store.getRun(runId) !== null || this.core.store.runSteeredWith(steerIdOf(runId)) !== null;
    if (request.budget_checked) this.core.spend.admitted(runId, request.agent.id, request.budget_checked.watched);
    const spent = request.budget_checked || replayed ? null : await this.budgetRefusal(runId, request.agent.id);
    if (spent) return spent;
    // A plain turn continues the session's head: its newest run.
    const head = this.core.store.headRun();
    return this.life.create({
      ...request,
      run_id: runId,
      base: { parent: head?.id ?? null, until: null },
      parent_run_id: null,
      forked_from_checkpoint: null,
    });
  }

  /**
   * The refusal of a turn of `agentId` on this session that the object can give before the
   * Worker reads the agent from D1: the session is busy with a run of that agent. Null when it
   * has no such answer (free, another agent's, not in this object's storage, being deleted, or a
   * turn whose `on_busy` is not `reject`): the turn then goes the whole way, and `startRun`
   * decides. Reads only; changes nothing.
   */
  async turnRefusal(identity: SessionIdentity, agentId: string, onBusy?: OnBusy): Promise<Refusal | null> {
    if (!this.core.store.isInitialized() || this.life.hasLeftDelete() || this.life.isDeleting()) return null;
    const stored = this.core.storedIdentity();
    if (stored?.tenant !== identity.tenant || stored.session_id !== identity.session_id) return null;
    if (this.core.store.getMeta("agent_id") !== agentId) return null;
    return this.life.onBusyOf(onBusy) === "reject" ? this.life.busyFailure() : null;
  }

  /**
   * Executes a pending background run: called by the queue consumer. Queues deliver at least
   * once, so a run that is already running or finished is left alone.
   */
  async executeRun(identity: SessionIdentity, runId: string): Promise<Result<{ started: boolean }>> {
    const refused = await this.enter(identity, { work: true, wake: false });
    if (refused) return refused;
    return this.life.startFromQueue(runId);
  }

  /** Ends a pending run whose queue message was dead-lettered; a run that started is left alone. */
  async failPendingRun(identity: SessionIdentity, runId: string, reason: string): Promise<Result<{ run: Run }>> {
    const refused = await this.enter(identity, { wake: false });
    if (refused) return refused;
    return this.life.failPending(runId, reason);
  }

  /**
   * The Cron sweeper's call for a run that the mirror shows without progress: resume it, or
   * end it after too many sweeps found it stuck.
   */
  async sweepRun(identity: SessionIdentity, runId: string, maxSweeps: number): Promise<Result<{ action: string }>> {
    const refused = await this.enter(identity, { work: true, wake: false });
    if (refused) return refused;
    return this.life.sweep(runId, maxSweeps);
  }

  /** The run once it has stopped, or after `waitMs` with its current state (a long-poll). */
  async waitForRun(identity: SessionIdentity, runId: string, waitMs: number): Promise<Result<{ run: Run }>> {
    const refused = await this.enter(identity);
    if (refused) return refused;
    const run = this.core.store.getRun(runId);
    if (!run) return fail("not_found", `Run ${runId} not found`);
    if (isGoingOn(run.status)) await this.life.stretchEnd(runId, waitMs);
    return { ok: true, run: renderRun(this.core.store.getRun(runId) ?? run) };
  }

  /** Resumes a paused run in place with the client's tool results and approval decisions. */
  async continueRun(request: ContinueRunRequest): Promise<RunAnswer> {
    const refused = await this.enter(request, { work: true });
    if (refused) return refused;
    // A run that has just paused goes on only once its run_paused is out.
    await this.life.announced(request.run_id);
    const run = this.core.store.getRun(request.run_id);
    if (!run) return fail("not_found", `Run ${request.run_id} not found`);
    const branching = request.fork === true || request.continue_from !== undefined || request.input !== null;
    const answered = [...request.tool_results, ...(request.approvals ?? [])].map((a) => a.tool_call_id);
    if (
      !branching &&
      answered.length > 0 &&
      (run.status !== "paused" || answered.every((id) => this.core.store.getToolResult(run.id, id) || run.approved?.includes(id)))
    ) {
      // Results and decisions for calls that are no longer pending (sent twice, or the run went on or stopped): the run as it is, nothing twice.
      return { ok: true, run: renderRun(run), stream: null };
    }
    switch (run.status) {
      case "queued":
        return fail("session_busy", `Run ${run.id} is queued: it has not started`, { session_id: run.session_id, run_id: run.id });
      case "pending":
      case "running":
        return this.life.busyFailure() ?? fail("session_busy", "The run is already running");
      case "paused":
        // A paused run holds the session: it goes on in place, and a branch must cancel it first.
        if (request.fork === true) return this.life.busyFailure() ?? fail("session_busy", "The run is paused");
        if (branching) {
          return fail("invalid_request", "A paused run continues in place with tool_results and approvals only", {
            fields: [{ path: request.input !== null ? "input" : "continue_from", message: "not allowed when continuing a paused run" }],
          });
        }
        break;
      case "cancelled":
        if (request.fork !== true)
          return fail("run_not_continuable", `Run ${run.id} was cancelled and cannot be continued in place; fork it`);
        return this.branch(run, request);
      case "completed":
      case "error":
        return this.branch(run, request);
    }
    if (request.background) {
      return fail("invalid_request", "A paused run continues in place, not in the background", {
        fields: [{ path: "background", message: "not allowed when continuing a paused run" }],
      });
    }
    const problem = checkAnswers(run.required_actions, request.tool_results, request.approvals ?? []);
    if (problem) return fail("invalid_request", problem.message, { fields: [problem] });
    const spent = await this.budgetRefusal(run.id, run.agent.id);
    if (spent) return spent;
    // The answers are checked again: another request may have continued the run during the ledger's answer.
    if (this.core.store.runStatus(run.id) !== "paused")
      return { ok: true, run: renderRun(this.core.store.getRun(run.id) ?? run), stream: null };

    return this.life.continueInPlace(run, request);
  }

  /** A sibling of a finished run, from one of its checkpoints or before its last user message. */
  private async branch(source: RunRecord, request: ContinueRunRequest): Promise<RunAnswer> {
    for (const field of ["tool_results", "approvals"] as const) {
      if ((request[field] ?? []).length === 0) continue;
      return fail("invalid_request", `${field} only continue a paused run`, {
        fields: [{ path: field, message: `run ${source.id} is ${source.status}, not paused` }],
      });
    }
    const plan = planBranch(this.core.store, source, request.continue_from ?? "end", request.input);
    if ("failure" in plan) return { ok: false, error: plan.failure };
    const runId = request.new_run_id ?? newId("run");
    const spent = this.core.store.getRun(runId) ? null : await this.budgetRefusal(runId, request.agent.id);
    if (spent) return spent;
    return this.life.create({
      tenant: request.tenant,
      session_id: request.session_id,
      agent: request.agent,
      input: plan.input,
      base: plan.base,
      parent_run_id: source.id,
      forked_from_checkpoint: plan.forked_from_checkpoint,
      metadata: request.metadata,
      stream: request.stream,
      background: request.background,
      run_id: runId,
      continued_from: { from_checkpoint: plan.forked_from_checkpoint },
    });
  }

  /** A run's checkpoints (docs/api.md, Checkpoints and step replay). */
  async getCheckpoints(identity: SessionIdentity, runId: string): Promise<Result<{ checkpoints: Checkpoint[] }>> {
    const refused = await this.enter(identity, { wake: false });
    if (refused) return refused;
    const run = this.core.store.getRun(runId);
    return run ? { ok: true, checkpoints: run.checkpoints ?? [] } : fail("not_found", `Run ${runId} not found`);
  }

  /**
   * Compacts the head branch now (docs/api.md: POST /v1/sessions/{id}/compact), on the agent as it
   * is now. A run in progress would send what it read before: the session must be idle.
   */
  async compactSession(identity: SessionIdentity, agent: Agent): Promise<Result<{ report: CompactionReport }>> {
    const refused = await this.enter(identity, { work: true, wake: false });
    if (refused) return refused;
    if (this.core.store.getMeta("agent_id") === null) return fail("not_found", `Session ${identity.session_id} not found`);
    const busy = this.life.busyFailure();
    if (busy) return busy;
    const head = this.core.store.headRun();
    if (!head) return fail("not_found", `Session ${identity.session_id} has no runs`);
    const history = compactedBranch(this.core, head);
    const size = estimateTokens(toModelMessages(history));
    // The summary is a model call: refused on a spent budget, and counted.
    const spent = await this.budgetRefusal(null, agent.id);
    if (spent) return spent;
    let outcome: Awaited<ReturnType<typeof summarizeOlderMessages>>;
    try {
      outcome = await summarizeOlderMessages(this.core.env, identity.tenant, agent, history, head.id, undefined, (usage) =>
        this.core.spend.report(agent, null, usage),
      );
    } catch (error) {
      return fail("provider_error", `Compaction failed: ${errorMessage(error)}`);
    } finally {
      await this.core.spend.flushed();
    }
    if (!outcome) return { ok: true, report: { summary: null, compacted_messages: 0, tokens_before: size, tokens_after: size } };
    const { compaction, compacted_messages } = outcome;
    this.core.commit(() => [this.core.saveCompaction(compaction)]);
    await this.core.flush();
    return {
      ok: true,
      report: {
        summary: compaction.summary,
        compacted_messages,
        tokens_before: compaction.tokens_before,
        tokens_after: compaction.tokens_after,
      },
    };
  }

  /**
   * `429 budget_exceeded` when a budget of the tenant, `agentId` or this session is spent
   * (docs/budgets.md); else null, and `runId` may make its first model call without asking again.
   */
  private async budgetRefusal(runId: string | null, agentId: string): Promise<Refusal | null> {
    const stop = await this.core.spend.admit(runId, agentId);
    return stop ? fail("budget_exceeded", stop.message, stopDetails(stop)) : null;
  }

  /** Cancels a run; idempotent. The turn is free as soon as this answers. */
  async cancelRun(identity: SessionIdentity, runId: string): Promise<Result<{ run: Run }>> {
    const refused = await this.enter(identity, { wake: false });
    if (refused) return refused;
    return this.life.cancel(runId, "cancelled by request");
  }

  async getRun(identity: SessionIdentity, runId: string): Promise<Result<{ run: Run }>> {
    const refused = await this.enter(identity);
    if (refused) return refused;
    const run = this.core.store.getRun(runId);
    return run ? { ok: true, run: renderRun(run) } : fail("not_found", `Run ${runId} not found`);
  }

  async getSession(identity: SessionIdentity): Promise<Result<{ session: SessionView }>> {
    const refused = await this.enter(identity);
    if (refused) return refused;
    const agentId = this.core.store.getMeta("agent_id");
    if (agentId === null) return fail("not_found", `Session ${identity.session_id} not found`);
    return {
      ok: true,
      session: summarizeSession(identity.session_id, agentId, this.core.store),
    };
  }

  /** The transcript of a branch (docs/api.md: GET …/transcript?run_id=). */
  async getTranscript(identity: SessionIdentity, runId: string | null, full = false): Promise<Result<{ messages: TranscriptMessage[] }>> {
    const refused = await this.enter(identity, { wake: false });
    if (refused) return refused;
    if (this.core.store.getMeta("agent_id") === null) return fail("not_found", `Session ${identity.session_id} not found`);
    // The head branch (what the next plain turn continues), or the branch that ends at `runId`.
    const target = runId === null ? this.core.store.headRun() : this.core.store.getRun(runId);
    if (!target) return runId === null ? { ok: true, messages: [] } : fail("not_found", `Run ${runId} not found`);
    return { ok: true, messages: full ? messagesOf(branchOf(this.core.store, target)) : compactedBranch(this.core, target) };
  }

  /** Cancels the session's run and removes all of its data, here and in D1. */
  async deleteSession(identity: SessionIdentity): Promise<Result<object>> {
    const refused = await this.enter(identity, { wake: false });
    if (refused) return refused;
    if (this.core.store.getMeta("agent_id") === null) return fail("not_found", `Session ${identity.session_id} not found`);
    return this.life.deleteSession(identity);
  }

  /**
   * The one way into the object (every RPC method, the socket handlers, the alarm): finishes a
   * delete that an evicted instance left half done (or refuses while it cannot), rebuilds a
   * session whose storage is empty from D1, refuses new `work` while a delete is in progress,
   * and (`wake`, the default) resumes a running run that no loop drives.
   */
  private async enter(identity: SessionIdentity, entry: { work?: boolean; wake?: boolean; isNew?: boolean } = {}): Promise<Refusal | null> {
    const leftDelete = await this.life.finishLeftDelete(identity);
    if (leftDelete) return leftDelete;
    if (!this.core.store.isInitialized()) await this.core.rebuild(identity, entry.isNew);
    if (entry.work && this.life.isDeleting()) return deletingFailure(identity);
    if (entry.wake !== false) this.life.wakeAfterEviction();
    this.core.spend.restore();
    return null;
  }

  /** A run's stored events after `after` (docs/api.md, Events of a run). */
  async readEvents(identity: SessionIdentity, runId: string, after: number): Promise<Result<{ events: RunEvent[] }>> {
    const refused = await this.enter(identity, { wake: false });
    if (refused) return refused;
    if (!this.core.store.getRun(runId)) return fail("not_found", `Run ${runId} not found`);
    return { ok: true, events: await this.core.events.readAll(identity, runId, after) };
  }

  /**
   * SSE of a run's stored events after `after`, then of its live events until its current
   * stretch ends (event-stream.ts); a stretch that has ended closes after the replay.
   */
  async watchEvents(identity: SessionIdentity, runId: string, after: number): Promise<Result<{ stream: ReadableStream<Uint8Array> }>> {
    const refused = await this.enter(identity);
    if (refused) return refused;
    if (!this.core.store.getRun(runId)) return fail("not_found", `Run ${runId} not found`);
    return { ok: true, stream: this.core.replayOf(identity, runId, after) };
  }

  /** Only the WebSocket upgrade of `GET /v1/sessions/{id}/ws` reaches the object over fetch. */
  override async fetch(request: Request): Promise<Response> {
    const identity = upgradeIdentity(request);
    if (!identity) return new Response("Expected a WebSocket upgrade", { status: 426 });
    const refused = await this.enter(identity);
    if (refused) return Response.json({ error: refused.error }, { status: 409 });
    return this.core.sockets.accept(identity);
  }

  /** A client message; after hibernation the object was just rebuilt (constructor) to take it. */
  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    const identity = this.core.sockets.identityOf(ws);
    if (!identity) return ws.close(1011, "unknown socket");
    if (await this.enter(identity)) return ws.close(1011, "session is being deleted");
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
    meterAlarm(this.env);
    try {
      // The alarm has no caller: it acts for the session its storage names, if it has one.
      const identity = this.core.storedIdentity();
      if (!identity) return;
      if (await this.enter(identity, { work: true, wake: false })) return;
      if (!this.core.store.isInitialized()) return;
      for (const timer of this.core.timers.takeDue()) {
        if (timer === "outbox") await this.core.flush();
        if (timer === "queue_fallback") this.life.startPending("queue fallback timer");
        if (timer === "retry") this.life.endRetryWait();
        if (timer === "watchdog") this.life.resumeStalled();
        if (timer === "approval") this.life.expireApprovals();
      }
      this.life.announceLeft();
      this.core.timers.sync();
    } catch (error) {
      log({ event: "alarm_failed", message: errorMessage(error) });
      this.core.setTimer("outbox", Date.now() + OUTBOX_RETRY_MS);
    }
  }
}
