import type { Agent } from "../../agents";
import { ALLOWED, type BudgetStop, ledgerOf, REPORT_RESEND_MS, type Spend, type Verdict } from "../../budgets";
import { errorMessage } from "../../core/errors";
import { log } from "../../core/log";
import type { Usage } from "../../core/messages";
import { costOf } from "../../providers/pricing";
import { ProviderError } from "../../providers/types";
import type { RunRecord } from "../../run-model/run-record";
import type { SessionEnv } from "../session-env";
import type { SpendPort } from "../transcript/model-history";

/**
 * A ledger's answer is trusted for this long; after it (a long tool call, a pause) the next call
 * asks again. Also the longest an agent that no budget watches keeps its reports before sending them.
 */
const FRESH_MS = 10_000;
/** Reports kept in memory while the ledger cannot be reached; the oldest are dropped past this. */
const MAX_UNSENT = 1_000;

/**
 * The answer of a ledger that could not be reached, for an agent it has not told this object is
 * unwatched (told apart by identity).
 */
const UNREACHABLE: Verdict = { ok: true, watched: true };

type Answer = { verdict: Promise<Verdict>; at: number };

/**
 * Where the session object keeps the reports of watched calls until they are known counted
 * (its SQLite, written in the same synchronous turn as the step that made the call).
 */
export type StoredReports = { load(): Spend[]; save(spends: Spend[]): void };

/** The stored reports (a meta value of the session's SQLite): none when absent or unreadable. */
export function storedSpends(value: string | null): Spend[] {
  if (value === null) return [];
  try {
    const parsed: unknown = JSON.parse(value);
    return Array.isArray(parsed) ? parsed.filter((s): s is Spend => typeof s === "object" && s !== null && "id" in s) : [];
  } catch {
    return [];
  }
}

/**
 * The session object's side of its tenant's ledger (docs/budgets.md). Before each model call a
 * run asks "may I call?" (`mayCall`); after each call its usage is reported (`report`, the one way
 * spend is counted), and the ledger's answer to that report is the next call's permission: a
 * watched step pays one ledger round trip, sent while the step commits and runs its tools. A run
 * thus never holds more than one answered-but-uncounted call, which bounds the overshoot of
 * parallel runs. A watched call's report is stored in the object with the step that made it, and
 * sent again after a crash (the ledger counts each report once). An agent that no budget watches
 * (the ledger says so) reports in batches: when its run ends, or with its first call after
 * FRESH_MS. When the ledger cannot be reached its reports are kept and sent again with the next
 * ones; a call goes on only when the ledger's last answer to this object said no budget watched
 * the agent. Otherwise (a budget watched it, or this object has not heard from the ledger since it
 * started) no call is made that the ledger has not allowed: the step fails with a retryable error,
 * which the run's retry policy waits out (docs/budgets.md).
 */
export class SpendGate implements SpendPort {
  /** Reports the ledger has not confirmed. */
  private unsent: Spend[] = [];
  /** A run's permission for its next call: the answer to its last report or check. */
  private readonly answers = new Map<string, Answer>();
  /** Runs allowed one call that has not been reported yet, with when. */
  private readonly grants = new Map<string, number>();
  /** Agents no budget applied to at the ledger's last answer, until when that answer is trusted. */
  private readonly unwatched = new Map<string, number>();
  /** Whether a budget applied to the agent at the ledger's last answer; unknown agents make no call while it cannot be reached. */
  private readonly watched = new Map<string, boolean>();
  /** Reports of watched calls stored in the object and not yet known counted; null until read back (restore). */
  private stored: Spend[] | null = null;

  constructor(
    private readonly env: SessionEnv,
    private readonly identity: () => { tenant: string; session_id: string },
    private readonly storage: StoredReports,
  ) {}

  /**
   * Reads back the reports a previous instance stored and did not see counted (it died between a
   * call and the ledger's answer to its report), to be sent with the next ones. Called on every
   * entry; reads once per instance.
   */
  restore(): void {
    if (this.stored !== null) return;
    const recent = Date.now() - REPORT_RESEND_MS;
    this.stored = this.storage.load().filter((s) => s.at > recent);
    if (this.stored.length === 0) return;
    this.unsent.unshift(...this.stored);
    void this.send(this.unsent.splice(0));
  }

  /**
   * A turn's start (or a call outside a run, `runId` null): asks the ledger now; a refusal names
   * the spent budget, else the run may make its first call without asking again.
   */
  async admit(runId: string | null, agentId: string): Promise<BudgetStop | null> {
    if (runId !== null) this.answers.delete(runId);
    const verdict = await this.ask(agentId);
    if (!verdict.ok) return verdict;
    // Unreachable for a watched agent: no grant, so the run's first call asks again (mayCall).
    if (runId !== null && verdict !== UNREACHABLE) this.grant(runId);
    return null;
  }

  /** The run may make one model call without asking: its turn's check, made just now by the Worker, allowed it. */
  admitted(runId: string, agentId: string, watched: boolean): void {
    this.answers.delete(runId);
    this.heard(agentId, { ok: true, watched });
    this.grant(runId);
  }

  async mayCall(run: RunRecord): Promise<void> {
    const granted = this.grants.get(run.id);
    if (granted !== undefined && Date.now() - granted < FRESH_MS) return;
    const answer = this.answers.get(run.id);
    this.answers.delete(run.id);
    const verdict = answer && Date.now() - answer.at < FRESH_MS ? await answer.verdict : await this.ask(run.agent.id);
    if (verdict === UNREACHABLE) {
      this.grants.delete(run.id);
      throw new ProviderError(
        "internal",
        "The tenant's spend ledger could not be reached, and a budget watches this agent: no model call is made until it answers",
        true,
      );
    }
    if (!verdict.ok) {
      this.grants.delete(run.id);
      throw new ProviderError("budget_exceeded", verdict.message, false);
    }
    this.grant(run.id);
  }

  report(agent: Agent, runId: string | null, usage: Usage): number | null {
    this.restore();
    const cost = costOf(agent.model, usage, agent.prices);
    const now = Date.now();
    const spend: Spend = {
      agent_id: agent.id,
      session_id: this.identity().session_id,
      cost_usd: cost ?? 0,
      tokens: usage.input_tokens + usage.output_tokens,
      at: now,
    };
    if ((this.unwatched.get(agent.id) ?? 0) > now) {
      // No budget watches the agent: the report waits for the run's end (settled) or the next ask.
      this.unsent.push(spend);
      if (runId !== null) this.grant(runId);
      return cost;
    }
    // Stored before it is sent, in the same synchronous turn as the step that made the call.
    spend.id = crypto.randomUUID();
    this.stored = [...(this.stored ?? []), spend];
    this.storage.save(this.stored);
    this.unsent.push(spend);
    const verdict = this.ask(agent.id);
    const key = runId ?? `call:${crypto.randomUUID()}`;
    this.grants.delete(key);
    this.answers.set(key, { verdict, at: now });
    this.prune();
    return cost;
  }

  /** Resolves once the run's reports reached the ledger (a run's spend is counted before its end is announced). */
  async settled(runId: string): Promise<void> {
    const answer = this.answers.get(runId);
    this.grants.delete(runId);
    this.answers.delete(runId);
    await Promise.all([answer?.verdict, this.flushed()]);
  }

  /** Resolves once every report made so far reached the ledger (or failed). */
  async flushed(): Promise<void> {
    this.restore();
    const pending = [...this.answers.values()].map((a) => a.verdict);
    if (this.unsent.length > 0) pending.push(this.send(this.unsent.splice(0)).then(() => ALLOWED));
    await Promise.all(pending);
  }

  /** Sends the unsent reports and asks whether `agentId`'s next call in this session may be made. Never throws. */
  private async ask(agentId: string): Promise<Verdict> {
    const { tenant, session_id } = this.identity();
    this.restore();
    const spends = this.unsent.splice(0);
    try {
      const verdict = await ledgerOf(this.env, tenant).settle(spends, { agent_id: agentId, session_id });
      this.counted(spends);
      this.heard(agentId, verdict);
      return verdict;
    } catch (error) {
      this.keep(spends, error);
      return this.watched.get(agentId) === false ? ALLOWED : UNREACHABLE;
    }
  }

  /** Sends reports without asking anything. Never throws. */
  private async send(spends: Spend[]): Promise<void> {
    try {
      await ledgerOf(this.env, this.identity().tenant).settle(spends, null);
      this.counted(spends);
    } catch (error) {
      this.keep(spends, error);
    }
  }

  private keep(spends: Spend[], error: unknown): void {
    this.unsent = [...spends, ...this.unsent].slice(-MAX_UNSENT);
    log({ event: "ledger_unreachable", reports: spends.length, message: errorMessage(error) });
  }

  /** Forgets stored reports the ledger has counted (the stored copy is rewritten with the next one). */
  private counted(spends: Spend[]): void {
    if (!this.stored || this.stored.length === 0) return;
    const sent = new Set(spends.map((s) => s.id));
    this.stored = this.stored.filter((s) => !sent.has(s.id));
  }

  /** Remembers whether a budget watches the agent (skipping the ask for FRESH_MS when none does). */
  private heard(agentId: string, verdict: Verdict): void {
    const watched = !verdict.ok || verdict.watched;
    this.watched.set(agentId, watched);
    if (watched) this.unwatched.delete(agentId);
    else this.unwatched.set(agentId, Date.now() + FRESH_MS);
  }

  private grant(runId: string): void {
    this.grants.set(runId, Date.now());
  }

  /** Forgets answers and grants too old to be used (runs that ended without `settled`, such as a cancelled one). */
  private prune(): void {
    if (this.answers.size + this.grants.size < 64) return;
    const old = Date.now() - FRESH_MS;
    for (const [id, a] of this.answers) if (a.at < old) this.answers.delete(id);
    for (const [id, at] of this.grants) if (at < old) this.grants.delete(id);
  }
}
