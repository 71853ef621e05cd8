import type { Block } from "../../core/messages";
import { branchOf, messagesOf } from "./branch-messages";
import { textOf, toolCallsOf } from "./message-parts";
import type { SessionFailure } from "../../run-model/session-protocol";
import type { Checkpoint, InputPart, RunBase, RunRecord } from "../../run-model/run-record";
import type { SessionStore } from "../store/session-store";

/** Where a continuation starts: `"end"`, `"last_user"` or a checkpoint id (docs/api.md). */
export type ContinueFrom = "end" | "last_user" | string;

export type BranchPlan = { base: RunBase; forked_from_checkpoint: string | null; input: InputPart[] | null };

const failure = (type: SessionFailure["type"], message: string, path?: string): { failure: SessionFailure } => ({
  failure: { type, message, details: path ? { fields: [{ path, message }] } : {} },
});

/** A user message's text and media, to be sent again (a regenerate). */
const asInput = (content: Block[]): InputPart[] =>
  content.flatMap((b): InputPart[] =>
    b.type === "text" ? [{ type: "text", text: b.text }] : b.type === "image" || b.type === "file" ? [b] : [],
  );

/**
 * Plans a new run that branches off `source` (which is never changed): its history is the
 * source's history up to a checkpoint, or before its last user message, plus `input`.
 */
export function planBranch(
  store: SessionStore,
  source: RunRecord,
  from: ContinueFrom,
  input: InputPart[] | null,
): BranchPlan | { failure: SessionFailure } {
  const history = messagesOf(branchOf(store, source));
  if (from === "last_user") {
    const lastUser = [...history].reverse().find((m) => m.role === "user");
    if (!lastUser) return failure("invalid_request", "The run has no user message to go back to", "continue_from");
    const resent = input ?? asInput(lastUser.content);
    if (resent.length === 0) return failure("invalid_request", "The last user message has nothing to send again; give an input", "input");
    return { base: { parent: source.id, until: lastUser.index - 1 }, forked_from_checkpoint: null, input: resent };
  }
  const checkpoints = source.checkpoints ?? [];
  const checkpoint: Checkpoint | undefined =
    from === "end" ? [...checkpoints].reverse().find((c) => c.after === "end") : checkpoints.find((c) => c.id === from);
  if (!checkpoint) {
    return from === "end"
      ? failure("invalid_request", `Run ${source.id} has no end checkpoint to continue from`, "continue_from")
      : failure("not_found", `Checkpoint ${from} not found in run ${source.id}`);
  }
  const last = history.filter((m) => m.index <= checkpoint.message_index).at(-1);
  if (input === null && last?.role === "assistant" && toolCallsOf(last).length === 0) {
    return failure(
      "invalid_request",
      `The run ended with an answer (${textOf(last).slice(0, 40)}…): continuing it needs an input`,
      "input",
    );
  }
  return { base: { parent: source.id, until: checkpoint.message_index }, forked_from_checkpoint: checkpoint.id, input };
}
