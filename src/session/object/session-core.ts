import type { Block } from "../../core/messages";
import { newId, nowIso } from "../../core/ids";
import { errorMessage } from "../../core/errors";
import { log, type LogContext } from "../../core/log";
import { positiveNumber } from "../../core/settings";
import type { SessionEnv } from "../session-env";
import { CompactionStore, mirrorCompaction, rebuildCompactions, type Compaction } from "../transcript/compaction-store";
import { EventLog } from "../store/event-log";
import { Mirror } from "../store/mirror";
import { replayStream } from "../stream/replay-stream";
import { DELTA_WINDOW_MS, DeltaBuffer } from "../stream/delta-buffer";
import { EventHub, isTerminal, type EventData, type RunEvent, type RunEventType } from "../stream/events";
import { isWebhookFanOut, mirrorMessage, mirrorRun, mirrorRunInputs, mirrorSession, mirrorWebhookEvent } from "../store/mirror-statements";
import { webhookEventsOf } from "../../webhooks/event-types";
import type { WebhookMessage } from "../../webhooks/message";
import type { SessionFailure, SessionIdentity } from "../../run-model/session-protocol";
import { meteredEnv, meterOn, meterSql } from "../../core/storage-meter";
import { initializeNew, rebuildFromMirror } from "../store/rebuild";
import type { RunMessage } from "../../run-model/run-message";
import { type Checkpoint, isGoingOn, type RunRecord } from "../../run-model/run-record";
import { SessionSockets } from "../stream/sockets";
import { SessionStore, type MirrorStatement, type StoredMessage } from "../store/session-store";
import { Timers, type TimerName } from "./timers";
import { SpendGate, storedSpends } from "./spend-gate";

/** A failed D1 mirror batch is retried on the alarm after this long. */
export const OUTBOX_RETRY_MS = 2_000;

/** A refusal the Worker turns into docs/api.md's error answer. */
export const fail = (type: SessionFailure["type"], message: string, details?: Record<string, unknown>) =>
  ({ ok: false, error: { type, message, details } }) as const;

/** A refusal the object answers instead of doing what it was asked. */
export type Refusal = ReturnType<typeof fail>;

/** The refusal of new work while the session is being deleted. */
export const deletingFailure = (identity: SessionIdentity): Refusal =>
  fail("session_busy", `Session ${identity.session_id} is being deleted`, { session_id: identity.session_id });

/**
 * The state and the mechanics of one session's object: storage, the event hub and log,
 * sockets, timers and the outbox to D1, all written through `commit`. The Durable Object class
 * (session-object.ts) is its RPC surface; RunLifecycle (run-lifecycle.ts) moves its runs.
 */
export class SessionCore {
  readonly store: SessionStore;
  readonly hub = new EventHub();
  readonly timers: Timers;
  /** Checkpoints recorded in the current commit, whose events follow it. */
  private readonly newCheckpoints: { run: RunRecord; checkpoint: Checkpoint }[] = [];
  /** The next seq to hand out, once read from storage (nextSeq). */
  private nextSeqValue: number | null = null;
  /** The mirror's drains, one after the other (flush). */
  private flushing: Promise<void> = Promise.resolve();
  /** The stored event log and its per-step buffer (event-log.ts). */
  readonly events: EventLog;
  /** The session's hibernatable WebSockets (sockets.ts). */
  readonly sockets: SessionSockets;
  /** The session's compaction summaries (compaction-store.ts). */
  readonly compactions: CompactionStore;
  /** The copy of the outbox and the event log to D1 (mirror.ts). */
  readonly mirror: Mirror;
  /** A streamed answer's deltas, stored a window's worth at a time (delta-buffer.ts). */
  private readonly deltas = new DeltaBuffer(DELTA_WINDOW_MS, (writeAll) => this.events.packed(writeAll));
  /** Model calls' spend: checked against and counted in the tenant's ledger (spend-gate.ts). */
  readonly spend: SpendGate;
  /** Whether this instance armed the outbox timer since the mirror was last idle. */
  private mirrorArmed = false;
  /** Webhook deliveries the mirror made in D1 and that are not on the webhook queue yet (drainOutbox). */
  private newDeliveries: string[] = [];

  readonly env: SessionEnv;

  constructor(
    readonly ctx: DurableObjectState,
    env: SessionEnv,
  ) {
    this.env = meteredEnv(env);
    const sql = meterOn(env) ? meterSql(ctx.storage.sql) : ctx.storage.sql;
    this.store = new SessionStore(sql);
    this.timers = new Timers(this.store, ctx.storage);
    this.events = new EventLog(this.store, this.env.DB);
    this.mirror = new Mirror(
      this.store,
      () => {
        this.mirrorArmed = false;
        this.setTimer("outbox", null);
      },
      (statements, results) => {
        statements.forEach((statement, i) => {
          if (!isWebhookFanOut(statement)) return;
          for (const row of results[i]?.results ?? []) {
            if (typeof row === "object" && row !== null && "id" in row && typeof row.id === "string") this.newDeliveries.push(row.id);
          }
        });
      },
    );
    this.sockets = new SessionSockets(ctx);
    this.compactions = new CompactionStore(sql);
    this.spend = new SpendGate(this.env, () => ({ tenant: this.tenant(), session_id: this.sessionId }), {
      load: () => (this.store.isInitialized() ? storedSpends(this.store.getMeta("spend_reports")) : []),
      // Not into a storage a delete has emptied meanwhile (its session is gone; the reports are sent from memory).
      save: (spends) => (this.store.isInitialized() ? this.store.setMeta("spend_reports", JSON.stringify(spends)) : undefined),
    });
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

  /** SSE of a run's stored events after `after`, then its live ones until its stretch ends. */
  replayOf(identity: SessionIdentity, runId: string, after: number): ReadableStream<Uint8Array> {
    return replayStream({
      hub: this.hub,
      runId,
      after,
      read: (from) => this.events.read(identity, runId, from),
      isLive: () => {
        const status = this.store.runStatus(runId);
        return this.events.isOpen(runId) || isGoingOn(status);
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

  /** Sends the background run to the queue. A failed send is left to the fallback timer. */
  async enqueue(run: RunRecord): Promise<void> {
    const message: RunMessage = { tenant: this.tenant(), session_id: run.session_id, run_id: run.id };
    try {
      await this.env.RUNS.send(message);
    } catch (error) {
      log({ event: "queue_message", run_id: run.id, outcome: `send failed: ${errorMessage(error)}` });
    }
  }

  queueFallbackMs(): number {
    return positiveNumber(this.env.QUEUE_FALLBACK_SECONDS, 30) * 1000;
  }

  /** The ids a run's log lines carry (core/log.ts): every line its loop logs has them. */
  logContextOf(run: Pick<RunRecord, "id" | "agent_id">): LogContext {
    return { tenant: this.tenant(), session_id: this.sessionId, agent_id: run.agent_id, run_id: run.id };
  }

  /** A run's opening events: `run_started`, then (a branch's, unless it comes next anyway) `run_continued`. */
  emitOpening(run: RunRecord, withContinued = true): void {
    this.emit(run, "run_started", { agent_id: run.agent_id, agent_version: run.agent_version });
    if (run.continued_from && withContinued) this.emit(run, "run_continued", run.continued_from);
  }

  emit<Type extends RunEventType>(run: RunRecord, type: Type, data: EventData<Type>): void {
    const createdAt = nowIso();
    if ((type === "content_delta" || type === "reasoning_delta") && run.agent.store_events !== false) {
      this.deltas.add(() => {
        try {
          this.emitNow(run, type, data, createdAt);
        } catch (error) {
          // Written from the window's timer: the session was deleted under the run.
          log({ event: "unhandled_error", message: errorMessage(error) });
        }
      }, this.hub.watched || this.sockets.isWatched());
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
    const event: RunEvent = { seq: this.nextSeq(stored), type, run_id: run.id, session_id: run.session_id, created_at: createdAt, data };
    // Stored before anyone sees it (event-log.ts): the platform holds the frames below until the write is durable.
    this.events.record(event, stored);
    // Its webhook deliveries go in the outbox in the same write (no await between: one atomic
    // write), so they outlive a crash right after it; the mirror makes them in D1 (docs/webhooks.md).
    const hooks = webhookEventsOf(type, data, run.surface != null);
    if (hooks.length > 0) this.store.enqueueMirror([mirrorWebhookEvent(this.tenant(), run, event, hooks)]);
    if (stored || hooks.length > 0) this.armMirror();
    this.hub.publish(event);
    this.sockets.broadcast(event);
    if (isTerminal(type) || hooks.length > 0) void this.flush();
  }

  /**
   * The session's next seq, persisted as it is handed out, in the same coalesced write as its
   * event: a stored event's row records it, and an event that is not stored leaves it in the
   * `seq_ceiling` meta (SessionStore.seqCeiling reads both). A restart goes on from the last
   * one; none is reused or skipped.
   */
  nextSeq(stored: boolean): number {
    if (this.nextSeqValue === null || this.nextSeqValue <= 0) this.nextSeqValue = this.store.seqCeiling() + 1;
    const seq = this.nextSeqValue;
    if (!stored) this.store.setMeta("seq_ceiling", String(seq));
    this.nextSeqValue = seq + 1;
    return seq;
  }

  /** Applies `change` and puts its D1 statements in the outbox, in one transaction. */
  commit(change: () => MirrorStatement[]): void {
    let statements = 0;
    try {
      this.ctx.storage.transactionSync(() => {
        const mirrored = change();
        statements = mirrored.length;
        this.store.enqueueMirror(mirrored);
      });
    } catch (error) {
      // Rolled back: nothing read inside it may outlive it (store/message-cache.ts).
      this.store.forgetParsed();
      throw error;
    }
    if (statements > 0) this.armMirror();
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
      message_index: own ?? run.base?.until ?? -1,
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
      last_seq: this.store.seqCeiling(),
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

  /** Resolves once the drains started so far are done. */
  flushed(): Promise<void> {
    return this.flushing;
  }

  /**
   * Forgets the deleted session: closes its sockets, drops what memory holds of it, and deletes
   * the object's storage and alarm (the last step of a delete, run-lifecycle.ts).
   */
  async wipe(): Promise<void> {
    this.nextSeqValue = null;
    this.events.reset();
    this.sockets.closeAll(1000, "session deleted");
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
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
      log({ event: "outbox_failed", session_id: this.sessionId, message: errorMessage(error) });
      drained = false;
    }
    if (!drained) {
      this.mirrorArmed = true;
      this.setTimer("outbox", Date.now() + OUTBOX_RETRY_MS);
    }
    await this.sendNewDeliveries();
  }

  /**
   * Puts the deliveries the mirror made on the webhook queue. A send that fails (or an object
   * that dies before it) leaves them `pending` in D1, where the Cron sweep finds them
   * (src/maintenance/webhook-sweep.ts): none is lost, at worst it is late.
   */
  private async sendNewDeliveries(): Promise<void> {
    if (this.newDeliveries.length === 0) return;
    const ids = this.newDeliveries.splice(0);
    const tenant = this.tenant();
    try {
      await this.env.WEBHOOKS.sendBatch(ids.map((delivery_id) => ({ body: { tenant, delivery_id, attempt: 0 } satisfies WebhookMessage })));
    } catch (error) {
      log({ event: "webhook_enqueue_failed", delivery_ids: ids, message: errorMessage(error) });
    }
  }

  setTimer(name: TimerName, dueAt: number | null): void {
    this.timers.set(name, dueAt);
  }

  /** When a timer is due, or null when it is not set. */
  timerDue(name: TimerName): number | null {
    return this.timers.due(name);
  }
}
