import type { Block, Message, ToolCallBlock, Usage } from "../../core/messages";
import { loadMedia } from "../../media/load";
import { createProvider } from "../../providers";
import { promptCacheKey } from "../../providers/cache-key";
import { roundUsd } from "../../budgets";
import { classifyError, isAbortError } from "../../providers/errors";
import { ProviderError, type CallSettings, type ModelResponse } from "../../providers/types";
import { settingsOf } from "../../agents/model-settings";
import { executeTool, findTool, hasObjectArguments, strictArgumentsProblem, toolSpecs } from "../../tools";
import { fitStepOutputs, toolError } from "../../tools/outcome";
import type { McpConnections, McpOutcome } from "../../mcp";
import { mcpConnectionsOf, runMcpTools } from "./mcp-tools";
import { textOf, toolCallsOf } from "../transcript/message-parts";
import { retryDecision } from "./retry-policy";
import { stoppedAnswer } from "../../run-model/stop-reasons";
import { finalOutcome, holdForRepair, outputSchemaOf, withRepair } from "./structured-output";
import { branchOf, messagesOf } from "../transcript/branch-messages";
import { compactBranch, compactedBranch, modelHistory } from "../transcript/model-history";
import type { LoopHost } from "./loop-host";
import { isWaitingForRetry, type RequiredAction, type RunError, type RunRecord } from "../../run-model/run-record";
import type { StoredMessage } from "../store/session-store";

/** At most this many tool calls of one step run at once (a Worker may hold 6 connections). */
const TOOL_CONCURRENCY = 4;

export type { LoopHost } from "./loop-host";

/**
 * Drives a run from its persisted state to a stop. The next step is derived from the
 * transcript alone, so the same function resumes a run after an eviction or a crash.
 */
export async function driveRun(host: LoopHost, runId: string, signal: AbortSignal): Promise<void> {
  const started = host.store.getRun(runId);
  const mcp = started ? mcpConnectionsOf(host, started, signal) : null;
  try {
    await driveSteps(host, runId, signal, mcp);
  } finally {
    await mcp?.close();
  }
}

async function driveSteps(host: LoopHost, runId: string, signal: AbortSignal, mcp: McpConnections | null): Promise<void> {
  for (;;) {
    const run = host.store.getRun(runId);
    if (run?.status !== "running" || signal.aborted) return;
    // A retry waits on the object's alarm, never on a timer in memory: it survives eviction.
    if (isWaitingForRetry(run)) return;
    host.touch();
    const history = messagesOf(branchOf(host.store, run));
    const last = history[history.length - 1];
    const calls = last?.role === "assistant" ? toolCallsOf(last) : [];
    // Steers join before the next model call, after a step's tool results: so also after a final
    // answer, which then gets one more call (the steer is answered in the same run).
    if (calls.length === 0 && host.takeSteers(run)) continue;
    if (last?.role === "assistant") {
      if (calls.length === 0) {
        const outcome = finalOutcome(run, textOf(last));
        await host.finish(run, outcome.status, outcome.patch);
        return;
      }
      await toolStep(host, run, calls, signal, mcp);
    } else if (run.metrics.model_calls >= run.agent.max_steps) {
      await host.finish(run, "error", {
        error: { type: "max_steps_exceeded", message: `The run made ${run.agent.max_steps} model calls (max_steps)`, retryable: false },
      });
      return;
    } else {
      await modelStep(host, run, history, signal, mcp);
    }
  }
}

async function modelStep(
  host: LoopHost,
  run: RunRecord,
  branch: StoredMessage[],
  signal: AbortSignal,
  mcp: McpConnections | null,
): Promise<void> {
  const { agent } = run;
  const step = run.metrics.model_calls + 1;
  const attempt = run.call_attempt ?? 1;
  const provider = agent.provider === "mock" ? "anthropic" : agent.provider;
  // A compaction, when one is due, happens before the call it makes room for; a failed summary
  // call is this step's failure.
  let history: Message[];
  try {
    history = await modelHistory(host, run, branch, signal);
    // The tenant's ledger allows the call, or the run stops here with `budget_exceeded` (docs/budgets.md).
    await host.spend.mayCall(run);
  } catch (error) {
    await failStep(host, run, error, step, signal);
    return;
  }
  if (signal.aborted || host.store.runStatus(run.id) !== "running") return;
  const mcpTools = await runMcpTools(host, run, mcp, signal);
  if (signal.aborted || host.store.runStatus(run.id) !== "running") return;
  if (!Array.isArray(mcpTools)) {
    await host.finish(run, "error", { error: mcpTools });
    return;
  }
  host.emit(run, "model_request_started", { step, attempt, provider, model: agent.model });
  const started = Date.now();
  let response: ModelResponse;
  try {
    const adapter = createProvider(agent, host.env, host.tenant());
    const messages = withRepair(run, history, host.store.nextMessageIndex());
    // The bytes of the messages' images and files, from R2 (src/media/load.ts).
    const media = await loadMedia(host.env.MEDIA, { tenant: host.tenant(), session_id: host.sessionId }, messages);
    response = await adapter.call(
      {
        model: agent.model,
        // Instructions of whitespace alone are none: Anthropic refuses a whitespace-only system block.
        instructions: agent.instructions.trim() === "" ? undefined : agent.instructions,
        messages,
        media,
        tools: toolSpecs(agent, mcpTools),
        max_output_tokens: agent.max_output_tokens,
        settings: callSettings(run),
        attempt,
        cache_key: run.caller?.prompt_cache_key ?? (await promptCacheKey(host.tenant(), host.sessionId)),
        output_schema: outputSchemaOf(run) ?? undefined,
      },
      {
        signal,
        onEvent: (event) => {
          const type = event.type === "text_delta" ? "content_delta" : "reasoning_delta";
          host.emit(run, type, { text: event.text, step, attempt });
        },
      },
    );
  } catch (error) {
    await failStep(host, run, error, step, signal);
    return;
  }
  // Counted before anything else: a call that answered is paid for, even by a run cancelled meanwhile.
  const cost = host.spend.report(agent, run.id, response.usage);
  // A cancel may have come in while the answer streamed.
  const current = host.store.getRun(run.id);
  if (current?.status !== "running" || signal.aborted) return;
  addUsage(current, response.usage);
  if (cost !== null) current.metrics.cost_usd = roundUsd((current.metrics.cost_usd ?? 0) + cost);
  current.metrics.model_calls += 1;
  current.metrics.time_to_first_token_ms ??= response.time_to_first_token_ms;
  current.call_attempt = 1;
  current.retry_at = null;
  // A cut or declined answer ends the run, with only its text kept (stop-reasons.ts); it is never repaired.
  const stopped = stoppedAnswer(response, agent.max_output_tokens);
  if (stopped) current.answer_error = stopped.error;
  const content: Block[] = stopped?.content ?? (response.content.length > 0 ? response.content : [{ type: "text", text: "" }]);
  // A final answer that misses the output schema is held back, off the transcript, for its repair.
  const repair = stopped ? null : holdForRepair(current, content, host.store.nextMessageIndex());
  host.commit(() => [...(repair ? [] : [host.appendMessage(current, "assistant", content)]), ...host.saveRun(current)]);
  host.emit(current, "model_request_completed", {
    step,
    attempt,
    usage: response.usage,
    cost_usd: cost,
    duration_ms: Date.now() - started,
    time_to_first_token_ms: response.time_to_first_token_ms,
  });
  if (repair) host.emit(current, "output_repair", { step, errors: repair });
  const spent = current.metrics.cost_usd ?? 0;
  if (agent.max_cost_usd !== null && spent > agent.max_cost_usd) {
    // The budget is checked after each call: no further model call is made once it is passed.
    await host.finish(current, "error", {
      error: {
        type: "budget_exceeded",
        message: `The run cost $${spent.toFixed(6)}, over its max_cost_usd of $${agent.max_cost_usd}`,
        retryable: false,
      },
    });
  }
}

/** The agent's tuned settings for a call; past `max_tool_calls`, the model may call no more tools. */
function callSettings(run: RunRecord): CallSettings {
  const settings = settingsOf(run.agent);
  const exhausted = settings.max_tool_calls !== null && run.metrics.tool_calls >= settings.max_tool_calls;
  // A forced choice (`required`, a named tool) holds until the run's first tool call, as the
  // Agents SDK resets it: forced on every step, the model could never answer.
  const forced = settings.tool_choice === "required" || typeof settings.tool_choice === "object";
  const choice = forced && run.metrics.tool_calls > 0 ? "auto" : settings.tool_choice;
  return {
    ...(settings.temperature !== null ? { temperature: settings.temperature } : {}),
    ...(settings.top_p !== null ? { top_p: settings.top_p } : {}),
    ...(exhausted ? { tool_choice: "none" as const } : choice !== "auto" ? { tool_choice: choice } : {}),
    ...(settings.parallel_tool_calls ? {} : { parallel_tool_calls: false }),
    ...(settings.reasoning ? { reasoning: settings.reasoning } : {}),
    ...(settings.thinking ? { thinking: settings.thinking } : {}),
    ...(settings.stop ? { stop: settings.stop } : {}),
    ...(run.caller?.end_user ? { end_user: run.caller.end_user } : {}),
  };
}

function addUsage(run: RunRecord, usage: Usage): void {
  const m = run.metrics;
  m.input_tokens += usage.input_tokens;
  m.output_tokens += usage.output_tokens;
  m.cache_read_tokens += usage.cache_read_tokens;
  m.cache_write_tokens += usage.cache_write_tokens;
  m.reasoning_tokens += usage.reasoning_tokens;
  m.total_tokens = m.input_tokens + m.output_tokens;
}

async function toolStep(
  host: LoopHost,
  run: RunRecord,
  calls: ReturnType<typeof toolCallsOf>,
  signal: AbortSignal,
  mcp: McpConnections | null,
) {
  const { agent } = run;
  const mcpTools = await runMcpTools(host, run, mcp, signal);
  if (!Array.isArray(mcpTools)) {
    await host.finish(run, "error", { error: mcpTools });
    return;
  }
  const findCalled = (name: string) => findTool(agent, name, mcpTools);
  const unanswered = overBudget(
    host,
    run,
    calls.filter((c) => !host.store.getToolResult(run.id, c.tool_call_id)),
  );
  // A client call whose arguments could not be read, or miss a strict tool's parameters, is
  // answered here with a tool error, not paused for.
  const isForClient = (c: ToolCallBlock) =>
    findCalled(c.name)?.type === "client" && hasObjectArguments(c) && strictArgumentsProblem(agent, c) === null;
  // A call of a tool that requires approval runs only once a person approved it (run-lifecycle.ts records the decisions).
  const waitsForApproval = (c: ToolCallBlock) => {
    const tool = findCalled(c.name);
    return (
      tool !== undefined && tool.type !== "client" && tool.requires_approval === true && !(run.approved ?? []).includes(c.tool_call_id)
    );
  };
  const forClient = unanswered.filter(isForClient);
  const forApproval = unanswered.filter((c) => !isForClient(c) && waitsForApproval(c));
  const forServer = unanswered.filter((c) => !isForClient(c) && !waitsForApproval(c));

  const queue = [...forServer];
  let fatal: string | null = null;
  const worker = async () => {
    for (let call = queue.shift(); call; call = queue.shift()) {
      // No further tool is started once the run is cancelled.
      if (signal.aborted || host.store.runStatus(run.id) !== "running") return;
      host.emit(run, "tool_call_started", { tool_call_id: call.tool_call_id, name: call.name, arguments: call.arguments });
      const started = Date.now();
      const outcome = await runOnce(host, run, call, findCalled(call.name)?.type === "mcp", () =>
        executeTool(call, {
          agent,
          run_id: run.id,
          session_id: host.sessionId,
          webhookSecret: host.env.WEBHOOK_SECRET,
          environment: host.env.ENVIRONMENT,
          signal,
          ...(mcp
            ? {
                mcp: {
                  tools: mcpTools,
                  call: {
                    connections: mcp,
                    bucket: host.env.MEDIA,
                    scope: { tenant: host.tenant(), session_id: host.sessionId },
                    run_id: run.id,
                  },
                },
              }
            : {}),
        }),
      );
      if (outcome.fatal) fatal ??= outcome.fatal;
      // A run cancelled while the call ran has ended: its late result is neither recorded nor emitted.
      if (signal.aborted || host.store.runStatus(run.id) !== "running") return;
      // The result and the run's count in one transaction; D1 gets them with the step's tool message.
      host.commit(() => {
        host.store.recordToolResult({
          tool_call_id: call.tool_call_id,
          run_id: run.id,
          output: outcome.output,
          is_error: outcome.is_error,
        });
        const current = host.store.getRun(run.id);
        if (current) {
          current.metrics.tool_calls += 1;
          host.store.putRun(current);
        }
        return [];
      });
      if (outcome.is_error) host.emit(run, "tool_call_error", { tool_call_id: call.tool_call_id, name: call.name, error: outcome.output });
      else {
        host.emit(run, "tool_call_completed", {
          tool_call_id: call.tool_call_id,
          name: call.name,
          output: outcome.output,
          duration_ms: Date.now() - started,
        });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(TOOL_CONCURRENCY, forServer.length) }, worker));

  const current = host.store.getRun(run.id);
  if (current?.status !== "running" || signal.aborted) return;
  if (fatal !== null) {
    // A server refused the credential: the run ends (its results so far are recorded); docs/mcp.md.
    await host.finish(current, "error", { error: { type: "tool_error", message: fatal, retryable: false } });
    return;
  }
  if (forClient.length > 0 || forApproval.length > 0) {
    const action = (type: "tool_result" | "approval") => (c: ToolCallBlock) => ({
      type,
      tool_call_id: c.tool_call_id,
      name: c.name,
      arguments: c.arguments,
    });
    const required_actions: RequiredAction[] = [...forClient.map(action("tool_result")), ...forApproval.map(action("approval"))];
    for (const { type, ...call } of required_actions)
      host.emit(current, type === "approval" ? "approval_requested" : "tool_call_started", call);
    await host.finish(current, "paused", { required_actions });
    return;
  }
  const outcomes = fitStepOutputs(
    calls.map((c) => {
      const entry = host.store.getToolResult(run.id, c.tool_call_id);
      return { tool_call_id: c.tool_call_id, output: entry?.output ?? "", is_error: entry?.is_error ?? true };
    }),
  );
  const results: Block[] = outcomes.map((o) => ({ type: "tool_result", ...o }));
  host.commit(() => {
    const message = host.appendMessage(current, "tool", results);
    // One checkpoint per step, after all of its results: a fork never starts between parallel calls.
    const lastCall = calls[calls.length - 1];
    host.addCheckpoint(current, { after: "tool_result", tool_call_id: lastCall?.tool_call_id ?? null, tool_name: lastCall?.name ?? null });
    return [message, ...host.saveRun(current)];
  });
}

/**
 * Runs an MCP call at most once (docs/mcp.md, Once only): the call is marked sent, durably, before
 * its request leaves; a call found marked with no result was sent by a drive that died before it
 * recorded the outcome, and MCP has no idempotency key to send it again safely, so it becomes a
 * tool error the model reads. Other tools run as they are (a webhook is re-sent with its key).
 */
async function runOnce(
  host: LoopHost,
  run: RunRecord,
  call: ToolCallBlock,
  once: boolean,
  execute: () => Promise<McpOutcome>,
): Promise<McpOutcome> {
  if (!once) return execute();
  if (host.store.wasSent(run.id, call.tool_call_id)) {
    return toolError(
      `Outcome unknown: ${call.name} was sent to its MCP server, and the run stopped before the answer was recorded; it was not sent again (it may or may not have taken effect)`,
    );
  }
  host.commit(() => {
    host.store.markSent(run.id, call.tool_call_id);
    return [];
  });
  return execute();
}

/**
 * The calls the run's `max_tool_calls` still allows; each later one is answered at once with a
 * tool error the model reads, and never runs.
 */
function overBudget(host: LoopHost, run: RunRecord, calls: ToolCallBlock[]): ToolCallBlock[] {
  const limit = settingsOf(run.agent).max_tool_calls;
  if (limit === null) return calls;
  const allowed = Math.max(0, limit - run.metrics.tool_calls);
  for (const call of calls.slice(allowed)) {
    const output = `Not run: the run reached its max_tool_calls (${limit})`;
    host.commit(() => {
      host.store.recordToolResult({ tool_call_id: call.tool_call_id, run_id: run.id, output, is_error: true });
      return [];
    });
    host.emit(run, "tool_call_started", { tool_call_id: call.tool_call_id, name: call.name, arguments: call.arguments });
    host.emit(run, "tool_call_error", { tool_call_id: call.tool_call_id, name: call.name, error: output });
  }
  return calls.slice(0, allowed);
}

/**
 * A failed step (its model call, or the summary call before it): one compaction and one more
 * attempt for a context-window error when the agent compacts, else a retry or the run's end.
 */
async function failStep(host: LoopHost, run: RunRecord, error: unknown, step: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted || isAbortError(error)) return;
  const attempt = run.call_attempt ?? 1;
  let failure = error instanceof ProviderError ? error : classifyError(error);
  const current = host.store.getRun(run.id);
  if (current?.status !== "running") return;
  if (failure.type === "context_window_exceeded" && current.agent.compaction?.enabled && !current.overflow_compacted) {
    // One compaction and one more attempt (docs/api.md, Retries); a second overflow is permanent.
    current.overflow_compacted = true;
    current.call_attempt = attempt + 1;
    host.commit(() => host.saveRun(current));
    try {
      await compactBranch(host, current, compactedBranch(host, current), signal);
      return;
    } catch (compactionError) {
      if (signal.aborted || isAbortError(compactionError)) return;
      // The summary call failed: that is the step's failure now, retried (compaction included) or final.
      failure = compactionError instanceof ProviderError ? compactionError : classifyError(compactionError);
      current.overflow_compacted = false;
      current.call_attempt = attempt;
    }
  }
  const retry = retryDecision(failure, current.metrics.retries, current.agent);
  if (retry) {
    host.retryLater(current, failure, retry.delayMs, step);
    return;
  }
  const runError: RunError = { type: failure.type, message: failure.message, retryable: failure.retryable };
  if (failure.status !== null) runError.status = failure.status;
  await host.finish(current, "error", { error: runError });
}
