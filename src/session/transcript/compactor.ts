import type { Agent } from "../../agents";
import { newId, nowIso } from "../../core/ids";
import { transcriptText } from "../../core/message-text";
import type { Usage } from "../../core/messages";
import { createProvider } from "../../providers";
import { classifyError } from "../../providers/errors";
import { type ModelResponse, ProviderError } from "../../providers/types";
import { sendableHistory } from "./message-parts";
import { stoppedAnswer } from "../../run-model/stop-reasons";
import { estimateTokens, splitForCompaction, toModelMessages, type TranscriptMessage } from "./compaction";
import type { Compaction } from "./compaction-store";

const SUMMARY_INSTRUCTIONS =
  "You compact conversations. Summarise the conversation you are given so that it can replace it: keep every fact, decision, name, number, tool result and open question that later turns may need. Answer with the summary only.";
const SUMMARY_REQUEST = "Summarise the conversation above.";
const TRANSCRIPT_HEADING = "The conversation to summarise:";

export type CompactionOutcome = { compaction: Compaction; compacted_messages: number; usage: Usage };

/**
 * Summarises a branch's older messages with one model call on the agent's own provider (the
 * last `keep_last_messages` stay, a tool call is never split from its result). Returns null
 * when there is too little to summarise; throws a ProviderError when the model call fails.
 * `onUsage` gets the call's usage as soon as it answers, whatever becomes of its summary.
 */
export async function summarizeOlderMessages(
  env: Parameters<typeof createProvider>[1],
  tenant: string,
  agent: Agent,
  history: TranscriptMessage[],
  runId: string,
  signal: AbortSignal | undefined,
  onUsage: (usage: Usage) => void,
): Promise<CompactionOutcome | null> {
  const keep = agent.compaction?.keep_last_messages ?? 8;
  const cut = splitForCompaction(history, keep);
  if (cut === null) return null;
  const older = history.slice(0, cut);
  const kept = history.slice(cut);
  const provider = createProvider(agent, env, tenant);
  const maxOutputTokens = Math.min(agent.max_output_tokens, 4096);
  let response: ModelResponse;
  try {
    response = await provider.call(
      {
        model: agent.model,
        instructions: SUMMARY_INSTRUCTIONS,
        // The older messages as one plain-text transcript, not as the provider's tool blocks: valid
        // on every provider whatever the history holds (Anthropic refuses tool_use / tool_result
        // blocks in a request without `tools`), and the summary is a text task anyway.
        messages: [
          {
            role: "user",
            content: [{ type: "text", text: `${TRANSCRIPT_HEADING}\n\n${transcriptText(sendableHistory(toModelMessages(older)))}` }],
          },
          { role: "user", content: [{ type: "text", text: SUMMARY_REQUEST }] },
        ],
        tools: [],
        max_output_tokens: maxOutputTokens,
        attempt: 1,
      },
      { signal },
    );
  } catch (error) {
    throw error instanceof ProviderError ? error : classifyError(error);
  }
  onUsage(response.usage);
  // A cut or declined summary would replace the messages with less than they said: it is a failure.
  const stopped = stoppedAnswer(response, maxOutputTokens);
  if (stopped) throw new ProviderError(stopped.error.type, `the summary: ${stopped.error.message}`, false);
  const summary = response.content
    .map((b) => (b.type === "text" ? b.text : ""))
    .join("")
    .trim();
  const first = older[0];
  const last = older[older.length - 1];
  if (!first || !last || summary === "") return null;
  const before = estimateTokens(toModelMessages(history));
  const compaction: Compaction = {
    id: newId("cmp"),
    run_id: runId,
    from_index: first.index,
    to_index: last.index,
    summary,
    tokens_before: before,
    tokens_after: estimateTokens(
      toModelMessages([
        { ...first, role: "user", content: [{ type: "summary", text: summary, replaces: [first.index, last.index] }] },
        ...kept,
      ]),
    ),
    created_at: nowIso(),
  };
  const compactedMessages = older.reduce((n, m) => n + (m.content[0]?.type === "summary" ? 0 : 1), 0);
  return { compaction, compacted_messages: compactedMessages, usage: response.usage };
}
