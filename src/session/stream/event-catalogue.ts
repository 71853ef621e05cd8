import { z } from "@hono/zod-openapi";

/**
 * Every event a run emits: its `data` shape and whether it ends a stretch of the run. The one
 * list: `emit()` is typed by it, streams and waiters take their terminal set from it, and the
 * OpenAPI document and docs/streaming.md describe events from it.
 */

const int = z.number().int();
const step = int.openapi({ description: "The run's model step (1 for its first model call)" });
const attempt = int.openapi({ description: "The attempt of this step's model call (1, then 2, … after a retry)" });

export const RUN_ERROR_TYPES = [
  "provider_error",
  "rate_limited",
  "overloaded",
  "auth_error",
  "quota_exceeded",
  "context_window_exceeded",
  "budget_exceeded",
  "output_invalid",
  "output_truncated",
  "refused",
  "max_steps_exceeded",
  "tool_error",
  "internal",
] as const;

const outputError = z.object({
  path: z.string().openapi({ description: "JSON pointer of the value at fault (empty for the whole answer)" }),
  message: z.string(),
});

/** Why a run ended in error (a run's `error` and `run_error`'s). */
export const runErrorSchema = z
  .object({
    type: z.enum(RUN_ERROR_TYPES).openapi({
      description:
        "output_truncated: the answer was cut at max_output_tokens (output holds its partial text); " +
        "refused: the model declined (output holds what it said); provider_error carries the provider's `status`",
    }),
    message: z.string(),
    retryable: z.boolean(),
    status: int.optional().openapi({ description: "The provider's HTTP status, where one answered" }),
    errors: z.array(outputError).optional().openapi({ description: "output_invalid: where the final answer missed the output schema" }),
  })
  .openapi("RunError");

/** A run's usage so far (the Run's `metrics` and `run_completed`'s). */
export const metricsSchema = z
  .object({
    input_tokens: int,
    output_tokens: int,
    cache_read_tokens: int,
    cache_write_tokens: int,
    reasoning_tokens: int,
    total_tokens: int,
    cost_usd: z.number().nullable().openapi({ description: "null while any model call's price is unknown" }),
    model_calls: int,
    tool_calls: int,
    retries: int,
    duration_ms: z.number(),
    time_to_first_token_ms: z.number().nullable(),
  })
  .openapi("Metrics");

const usage = z.object({
  input_tokens: int,
  output_tokens: int,
  cache_read_tokens: int,
  cache_write_tokens: int,
  reasoning_tokens: int,
});

export const requiredActionSchema = z.object({
  type: z
    .enum(["tool_result", "approval"])
    .optional()
    .openapi({ description: "A client tool's result, or a decision on a tool call; absent: tool_result" }),
  tool_call_id: z.string(),
  name: z.string(),
  arguments: z.unknown().openapi({ description: "The arguments the model gave, as parsed JSON" }),
});

const textDelta = z.object({ text: z.string(), step, attempt });
const toolCall = { tool_call_id: z.string(), name: z.string() };

const entry = <Data extends z.ZodType>(terminal: boolean, description: string, data: Data) => ({ terminal, description, data });

export const EVENT_CATALOGUE = {
  run_queued: entry(
    false,
    'The run waits behind the session\'s turn (`on_busy: "enqueue"`); `position` 1 is first in line. Its `run_started` follows when it starts',
    z.object({ position: int }),
  ),
  input_steered: entry(
    false,
    'An input sent to the running run (`on_busy: "steer"`): its model gets it as a user message before its next call',
    z.object({ steer_id: z.string(), input: z.array(z.record(z.string(), z.unknown())) }),
  ),
  steer_queued: entry(
    false,
    "The run stopped before its model saw a steer: the steer became the queued run `queued_as`",
    z.object({ steer_id: z.string(), queued_as: z.string() }),
  ),
  run_started: entry(
    false,
    "A run began (once per run, its log's first event but for a queued run's `run_queued`)",
    z.object({ agent_id: z.string(), agent_version: int }),
  ),
  model_request_started: entry(false, "A model call began", z.object({ step, attempt, provider: z.string(), model: z.string() })),
  content_delta: entry(false, "Answer text as it streams", textDelta),
  reasoning_delta: entry(false, "Reasoning (thinking) text as it streams", textDelta),
  tool_call_started: entry(
    false,
    "A tool call began (a client tool's: the run pauses for its result)",
    z.object({ ...toolCall, arguments: z.unknown() }),
  ),
  tool_call_completed: entry(
    false,
    "A tool call answered; duration_ms is null for a client tool's result",
    z.object({ ...toolCall, output: z.string(), duration_ms: z.number().nullable() }),
  ),
  tool_call_error: entry(false, "A tool call failed; the model sees the error and goes on", z.object({ ...toolCall, error: z.string() })),
  checkpoint: entry(false, "A point the run can be forked from", z.object({ checkpoint_id: z.string(), step: int })),
  retry: entry(
    false,
    "A model call failed and is retried after delay_ms; the text its attempt streamed is void",
    z.object({
      step,
      attempt,
      delay_ms: int,
      error: z.object({ type: z.enum(RUN_ERROR_TYPES), message: z.string(), status: int.nullable() }),
    }),
  ),
  compaction: entry(
    false,
    "Older messages were summarised to fit the context window",
    z.object({ compacted_messages: int, tokens_before: int, tokens_after: int }),
  ),
  model_request_completed: entry(
    false,
    "A model call answered; cost_usd is null where the price is unknown",
    z.object({
      step,
      attempt,
      usage,
      cost_usd: z.number().nullable(),
      duration_ms: z.number(),
      time_to_first_token_ms: z.number().nullable(),
    }),
  ),
  output_repair: entry(
    false,
    "The step's final answer missed the output schema: its text is void, a repair call follows",
    z.object({ step, errors: z.array(outputError) }),
  ),
  run_continued: entry(
    false,
    "A paused run goes on, or a fork began (from_checkpoint: the checkpoint it forked from)",
    z.object({ from_checkpoint: z.string().nullable() }),
  ),
  approval_requested: entry(
    false,
    "A tool call waits for a person's decision (the tool has `requires_approval`); the run pauses for it",
    z.object({ tool_call_id: z.string(), name: z.string(), arguments: z.unknown() }),
  ),
  approval_decided: entry(
    false,
    "A decision on a tool call: by a client's continue (`key_id` of its key) or by the agent's approval timeout",
    z.object({
      tool_call_id: z.string(),
      approve: z.boolean(),
      reason: z.string().nullable(),
      key_id: z.string().nullable(),
      source: z.enum(["client", "timeout"]),
    }),
  ),
  run_paused: entry(
    true,
    "The run waits for the results of client tools or for approvals",
    z.object({ required_actions: z.array(requiredActionSchema) }),
  ),
  run_completed: entry(true, "The run finished", z.object({ output: z.unknown(), metrics: metricsSchema })),
  run_error: entry(true, "The run ended in error", z.object({ error: runErrorSchema })),
  run_cancelled: entry(true, "The run was cancelled", z.object({ reason: z.string() })),
};

export type RunEventType = keyof typeof EVENT_CATALOGUE;

/** The `data` of an event of `type`, as `emit()` takes it. */
export type EventData<Type extends RunEventType> = z.input<(typeof EVENT_CATALOGUE)[Type]["data"]>;

export const RUN_EVENT_TYPES = Object.keys(EVENT_CATALOGUE) as RunEventType[];

/** The event types that end a stretch of a run: a stream of that run closes after one. */
export const TERMINAL_EVENT_TYPES = RUN_EVENT_TYPES.filter((type) => EVENT_CATALOGUE[type].terminal);

const TERMINAL: ReadonlySet<string> = new Set(TERMINAL_EVENT_TYPES);

/** Ends a stretch of a run: a stream of that run closes after it. */
export const isTerminal = (type: RunEventType) => TERMINAL.has(type);

const envelope = {
  seq: int.openapi({ description: "The session's event sequence number (the SSE `id:`); resume after it" }),
  run_id: z.string(),
  session_id: z.string(),
  created_at: z.string().openapi({ description: "ISO 8601 time the event was emitted" }),
};

const pascal = (type: string) => type.replace(/(^|_)([a-z])/g, (_, __, letter: string) => letter.toUpperCase());

/** One schema per event type: the envelope with `type` fixed and its `data`. */
const eventVariants = RUN_EVENT_TYPES.map((type) =>
  z.object({ ...envelope, type: z.literal(type), data: EVENT_CATALOGUE[type].data }).openapi(`${pascal(type)}Event`, {
    description: `${EVENT_CATALOGUE[type].description}.${EVENT_CATALOGUE[type].terminal ? " Terminal: the stream of this stretch of the run closes after it." : ""}`,
  }),
);

/** A run event: a union discriminated on `type`. */
export const runEventSchema = z
  .discriminatedUnion("type", eventVariants as unknown as [(typeof eventVariants)[number], ...(typeof eventVariants)[number][]])
  .openapi("Event", {
    description: "A run event; its `data` depends on its `type`",
    example: {
      seq: 17,
      type: "content_delta",
      run_id: "run_01HZX3",
      session_id: "support-42",
      created_at: "2026-01-31T12:00:00.000Z",
      data: { text: "Hel", step: 1, attempt: 1 },
    },
  });
