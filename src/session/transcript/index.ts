/**
 * The messages a run sees: the branch of the session it continues (a run's prefix and its own
 * messages), branch plans for forks, the history sent to the model, and compaction summaries.
 */
export { branchOf, messagesOf } from "./branch-messages";
export { planBranch } from "./branch-plan";
export { compactedBranch } from "./model-history";
export type { TranscriptMessage } from "./compaction";
