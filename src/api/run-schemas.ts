import { z } from "@hono/zod-openapi";
import { objectJsonSchema, runSettingFields, ON_BUSY } from "../agents";
import { CLIENT_ID } from "../core/ids";
import { contentPart } from "../media/part-schemas";
import { metricsSchema, requiredActionSchema, runErrorSchema, runEventSchema } from "../session";

const blank = (text: string) => text.trim() === "";

/**
 * More than 20 parts is a 413 (docs/api.md), counted by parseInput, not a 400 of the schema. An input
 * with nothing in it (an empty or whitespace-only string, or only such text parts) is a 400:
 * providers refuse empty text, and such a turn would poison the session's history.
 */
export const runInput = z
  .union([z.string(), z.array(contentPart).min(1)])
  .refine((input) => (typeof input === "string" ? !blank(input) : input.some((part) => part.type !== "text" || !blank(part.text))), {
    message: "must contain non-whitespace text, an image or a file",
  })
  .openapi({ description: "A string, or an array of content parts (at most 20)" });

const clientId = z.string().regex(CLIENT_ID, "must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$");

export const createRunBody = z
  .strictObject({
    input: runInput,
    session_id: clientId
      .optional()
      .openapi({ description: "The session to run in: an existing one goes on, a new id starts one; absent: a new session" }),
    stream: z.boolean().default(false).openapi({ description: "Answer with an SSE stream of the run's events" }),
    background: z.boolean().default(false).openapi({ description: "Run from the queue and answer 202 at once (with stream: the stream)" }),
    /** Overrides the agent's for this run; null is the same as absent. */
    output_schema: objectJsonSchema
      .nullable()
      .optional()
      .openapi({ description: "A JSON Schema object the final answer must match; overrides the agent's (null: the agent's)" }),
    metadata: z.record(z.string(), z.unknown()).default({}).openapi({ description: "Free-form values kept on the run" }),
    on_busy: z.enum(ON_BUSY).optional().openapi({
      description:
        "When the session has an active run: `reject` (409 session_busy), `enqueue` (a `queued` run that starts when the session is free), `interrupt` (the active run is cancelled and this turn starts on top of what it did) or `rollback` (cancelled, and this turn starts from before it) or `steer` (the input joins the active run: 202 with `steer_id` at once); absent: the agent's `on_busy` (docs/runs.md)",
    }),
    ...runSettingFields,
    user: z.string().min(1).max(64).optional().openapi({
      description:
        "Your end user's id (hash it): sent to the provider for its abuse monitoring (OpenAI `safety_identifier`, Anthropic `metadata.user_id`)",
    }),
    prompt_cache_key: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .openapi({ description: "OpenAI's prompt cache key for this run's calls; absent: one per session" }),
  })
  .openapi("CreateRun", {
    example: { input: "What time is it in Paris?", session_id: "support-42", stream: true, metadata: { ticket: "T-1001" } },
  });

export const continueRunBody = z
  .strictObject({
    continue_from: z.string().min(1).optional().openapi({ description: "A checkpoint id of the run to branch from" }),
    fork: z.boolean().optional().openapi({ description: "Start a new run (a sibling) instead of going on in place" }),
    input: runInput.optional(),
    tool_results: z
      .array(z.strictObject({ tool_call_id: z.string().min(1), output: z.string(), is_error: z.boolean().optional() }))
      .max(128)
      .default([])
      .openapi({ description: "A paused run's results of client tools, one per `tool_result` required action" }),
    approvals: z
      .array(
        z.strictObject({
          tool_call_id: z.string().min(1),
          approve: z.boolean(),
          reason: z.string().max(1000).optional().openapi({ description: "Why (a denied call's tool error reads `denied: <reason>`)" }),
        }),
      )
      .max(128)
      .default([])
      .openapi({
        description: "A paused run's decisions, one per `approval` required action (sent with the tool_results of any pending client tool)",
      }),
    stream: z.boolean().default(false).openapi({ description: "Answer with an SSE stream of the run's events" }),
    background: z.boolean().default(false).openapi({ description: "Run a fork from the queue and answer 202 at once" }),
    metadata: z.record(z.string(), z.unknown()).default({}).openapi({ description: "Free-form values kept on the new run" }),
  })
  .openapi("ContinueRun", {
    example: { tool_results: [{ tool_call_id: "toolu_01A09q90qw90lq917835lq9", output: "Ada" }], stream: false },
  });

/** Where a run is in its life (docs/api.md, Runs). */
export const runStatusSchema = z.enum(["queued", "pending", "running", "paused", "completed", "cancelled", "error"]);

export const runSchema = z
  .object({
    id: z.string(),
    agent_id: z.string(),
    session_id: z.string(),
    status: runStatusSchema,
    input: z.array(z.record(z.string(), z.unknown())),
    output: z.unknown(),
    error: runErrorSchema.nullable(),
    required_actions: z.array(requiredActionSchema),
    parent_run_id: z.string().nullable(),
    forked_from_checkpoint: z.string().nullable(),
    agent_version: z.number(),
    attempts: z.number(),
    metrics: metricsSchema,
    metadata: z.record(z.string(), z.unknown()),
    created_at: z.string(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
  })
  .openapi("Run");

/**
 * An SSE answer's content: each frame is `id: <seq>`, `event: <type>` and `data:` one Event as JSON;
 * the stream closes after the stretch's terminal event.
 */
export const eventStreamContent = {
  "text/event-stream": { schema: runEventSchema },
};
