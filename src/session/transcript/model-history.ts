import type { Agent } from "../../agents";
import type { Message, Usage } from "../../core/messages";
import { classifyError, ModelCallAbortedError } from "../../providers/errors";
import { ProviderError } from "../../providers/types";
import { roundUsd } from "../../budgets";
import { toolSpecs } from "../../tools";
import { parseToolList } from "../../mcp";
import { branchOf, messagesOf } from "./branch-messages";
import { estimateTokens, toModelMessages, withCompaction, type TranscriptMessage } from "./compaction";
import { summarizeOlderMessages } from "./compactor";
import { sendableHistory } from "./message-parts";
import type { RunRecord } from "../../run-model/run-record";
import type { MirrorStatement, SessionStore, StoredMessage } from "../store/session-store";
import type { EventData, RunEventType } from "../stream/events";
import type { Compaction, CompactionStore } from "./compaction-store";

/**
 * How model calls' spend is checked and counted in the tenant's ledger (docs/budgets.md; the
 * session object's SpendGate). Every model call goes through it: `mayCall` before, `report` after.
 */
export interface SpendPort {
  /** Before a model call of the run: throws a ProviderError `budget_exceeded` when a budget of its tenant, agent or session is spent. */
  mayCall(run: RunRecord): Promise<void>;
  /**
   * After a model call that answered: counts its usage in the tenant's ledger (for `runId`'s next
   * call, the ledger's answer is its permission) and returns its cost, null when the price is unknown.
   */
  report(agent: Agent, runId: string | null, usage: Usage): number | null;
}

/** What a run's history and its compaction need from the session object (the run loop's host is one). */
export interface TranscriptHost {
  readonly spend: SpendPort;
  readonly env: Parameters<typeof summarizeOlderMessages>[0];
  readonly store: SessionStore;
  readonly compactions: CompactionStore;
  tenant(): string;
  emit<Type extends RunEventType>(run: RunRecord, type: Type, data: EventData<Type>): void;
  /** Applies `change` and queues its mirror statements, in one storage transaction. */
  commit(change: () => MirrorStatement[]): void;
  saveRun(run: RunRecord): MirrorStatement[];
  /** Stores a compaction (inside a `commit`) and returns its mirror statement. */
  saveCompaction(compaction: Compaction): MirrorStatement;
}

/** The run's branch as the API shows it: its latest compaction summary first. */
export const compactedBranch = (host: Pick<TranscriptHost, "store" | "compactions">, run: RunRecord): TranscriptMessage[] =>
  withCompaction(messagesOf(branchOf(host.store, run)), host.compactions.all());

/**
 * The messages of the run's next model call, from its branch (`messagesOf(branchOf(…))`, as
 * the loop already read it), without the messages of earlier runs a provider refused as an
 * invalid request (SessionStore.refusedRuns). With compaction enabled, a request that would exceed
 * `trigger_tokens` first has the branch's older messages summarised (a failed summary call
 * throws, as the model call would).
 */
export async function modelHistory(host: TranscriptHost, run: RunRecord, branch: StoredMessage[], signal: AbortSignal): Promise<Message[]> {
  // An earlier turn that a provider refused (its input, most likely) is not sent again.
  const refused = host.store.refusedRuns();
  // A branch of a refused run (its retry, a fork) goes on from it: those messages stay.
  const kept =
    refused.size === 0
      ? branch
      : branch.filter((message) => message.run_id === run.id || message.run_id === run.parent_run_id || !refused.has(message.run_id));
  let history = withCompaction(kept, host.compactions.all());
  const settings = run.agent.compaction;
  const size = () => {
    // The run's MCP tools are sent with every call too (listed when it started; none before its first call).
    const listed = run.agent.tools.some((tool) => tool.type === "mcp") ? host.store.getMcpTools(run.id) : null;
    const tools = toolSpecs(run.agent, listed === null ? [] : parseToolList(listed));
    return estimateTokens({ instructions: run.agent.instructions, messages: toModelMessages(history), tools });
  };
  if (settings?.enabled && size() > settings.trigger_tokens) {
    if (await compactBranch(host, run, history, signal)) history = compactedBranch(host, run);
  }
  return sendableHistory(toModelMessages(history));
}

/**
 * Summarises the branch's older messages, stores the summary and reports a `compaction` event.
 * Null when there is too little to summarise; throws a ProviderError when the summary call fails.
 */
export async function compactBranch(
  host: TranscriptHost,
  run: RunRecord,
  history: TranscriptMessage[],
  signal?: AbortSignal,
): Promise<{ summary: string; compacted_messages: number; tokens_before: number; tokens_after: number } | null> {
  // A failed summary call throws (a ProviderError): the caller treats it as the failure of the
  // step it was making room for, so it is retried or ends the run like a failed model call.
  let outcome: Awaited<ReturnType<typeof summarizeOlderMessages>>;
  let cost: number | null = null;
  try {
    // The summary is a model call like any other: checked against the budgets, and counted.
    await host.spend.mayCall(run);
    outcome = await summarizeOlderMessages(host.env, host.tenant(), run.agent, history, run.id, signal, (usage) => {
      cost = host.spend.report(run.agent, run.id, usage);
    });
  } catch (error) {
    const failure = error instanceof ProviderError ? error : classifyError(error);
    if (failure instanceof ModelCallAbortedError || failure.type === "budget_exceeded") throw failure;
    throw new ProviderError(failure.type, `Compaction failed: ${failure.message}`, failure.retryable, failure.status, failure.retryAfterMs);
  }
  if (!outcome) return null;
  const { compaction, compacted_messages, usage } = outcome;
  const current = host.store.getRun(run.id);
  host.commit(() => {
    const statements = [host.saveCompaction(compaction)];
    if (current) {
      // The summary's tokens are the run's too.
      const m = current.metrics;
      m.input_tokens += usage.input_tokens;
      m.output_tokens += usage.output_tokens;
      m.cache_read_tokens += usage.cache_read_tokens;
      m.cache_write_tokens += usage.cache_write_tokens;
      m.total_tokens = m.input_tokens + m.output_tokens;
      if (cost !== null) m.cost_usd = roundUsd((m.cost_usd ?? 0) + cost);
      statements.push(...host.saveRun(current));
    }
    return statements;
  });
  const report = { compacted_messages, tokens_before: compaction.tokens_before, tokens_after: compaction.tokens_after };
  host.emit(current ?? run, "compaction", report);
  return { summary: compaction.summary, ...report };
}
