import type { components } from "./openapi";

type Envelope = Omit<components["schemas"]["Event"], "type" | "data">;
type Data = Record<string, unknown>;

/** The data of the events a client most often reads; every event also carries other fields in `data`. */
type KnownData = {
  content_delta: { text: string; step: number; attempt: number };
  reasoning_delta: { text: string; step: number; attempt: number };
  tool_call_started: { tool_call_id: string; name: string; arguments?: unknown };
  checkpoint: { checkpoint_id: string; step: number };
};

/** Every event type of a run (docs/streaming.md). */
export const EVENT_TYPES = [
  "run_started",
  "model_request_started",
  "content_delta",
  "reasoning_delta",
  "tool_call_started",
  "tool_call_completed",
  "tool_call_error",
  "checkpoint",
  "retry",
  "compaction",
  "model_request_completed",
  "output_repair",
  "run_paused",
  "run_continued",
  "run_completed",
  "run_error",
  "run_cancelled",
] as const;

export type AgentryEventType = (typeof EVENT_TYPES)[number];

/** An event of a run, narrowed by `type`: `if (event.type === "content_delta") event.data.text` is a string. */
export type AgentryEvent = {
  [T in AgentryEventType]: Envelope & { type: T; data: T extends keyof KnownData ? KnownData[T] & Data : Data };
}[AgentryEventType];

/** The events that end a stretch of a run: a stream of the run closes after one. */
export const TERMINAL_EVENTS: ReadonlySet<string> = new Set(["run_completed", "run_error", "run_cancelled", "run_paused"]);

export const isTerminalEvent = (event: { type: string }) => TERMINAL_EVENTS.has(event.type);
