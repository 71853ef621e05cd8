/**
 * The Session Durable Object: its RPC surface (session-object.ts), the state and transitions
 * of its runs (session-core.ts), run creation, timers on the single alarm, and the RPC types.
 */
export { SessionObject } from "./session-object";
export { sumMetrics } from "./session-summary";
export type {
  CompactionReport,
  ContinueRunRequest,
  Result,
  RunAnswer,
  SessionFailure,
  SessionIdentity,
  SessionView,
  StartRunRequest,
  ToolResultInput,
} from "../../run-model/session-protocol";
