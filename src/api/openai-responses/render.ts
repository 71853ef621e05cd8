import type { Run, RunStatus } from "../../session";
import type { ResponseSurface } from "./surface";
import { functionCallItem, messageItem, type ServerToolItem } from "./tool-items";

const statusOf: Record<RunStatus, "queued" | "in_progress" | "completed" | "cancelled" | "failed"> = {
  queued: "queued",
  pending: "queued",
  running: "in_progress",
  // A run paused on client tools has answered: its response ends with `function_call` items.
  paused: "completed",
  completed: "completed",
  cancelled: "cancelled",
  error: "failed",
};

const unixSeconds = (iso: string | null) => (iso === null ? null : Math.floor(Date.parse(iso) / 1000));

/**
 * The run's final text as an assistant message item; a structured output is its JSON text. Its
 * id is the one it streamed as (`msg_<run>_<seq>`), so the stream and the final output name the
 * same item; `msg_<run>` when its text was not streamed as events (a run that stores none).
 */
function answerItem(run: Run, status: "completed" | "incomplete", id: string | null) {
  return messageItem(id ?? `msg_${run.id}`, typeof run.output === "string" ? run.output : JSON.stringify(run.output), status);
}

/** The client function calls a paused run waits for, as `function_call` output items. */
const functionCallItems = (run: Run) => run.required_actions.map((action) => functionCallItem(run.id, action));

function outputOf(run: Run, truncated: boolean, answerId: string | null) {
  if (run.status === "paused") return functionCallItems(run);
  if (run.output === null || run.output === undefined) return [];
  if (run.status === "completed") return [answerItem(run, "completed", answerId)];
  return truncated ? [answerItem(run, "incomplete", answerId)] : [];
}

/**
 * A run as an OpenAI Response object (docs/responses-api.md, "Mapping"): the response id is the
 * run id, `model` the agent id, `conversation` the session; the request's fields and the settings
 * in force come from the run's `surface` (surface.ts). A run cut by `max_output_tokens` is
 * `incomplete`; any other run error is `failed` with the run's error message. `toolItems`: the
 * agent's own tool calls of the run's current stretch, before its answer (tool-items.ts).
 */
export function renderResponse(
  run: Run,
  surface: ResponseSurface,
  toolItems: ServerToolItem[] = [],
  answerId: string | null = null,
  pausedAt: string | null = null,
) {
  const truncated = run.status === "error" && run.error?.type === "output_truncated";
  const failed = run.status === "error" && !truncated;
  const m = run.metrics;
  return {
    id: run.id,
    object: "response" as const,
    created_at: unixSeconds(run.created_at) as number,
    // A paused response has answered (with its calls) when the run paused: the time of its `run_paused`.
    completed_at: run.status === "completed" ? unixSeconds(run.finished_at) : run.status === "paused" ? unixSeconds(pausedAt) : null,
    status: truncated ? ("incomplete" as const) : statusOf[run.status],
    error: failed
      ? {
          code: run.error?.type === "rate_limited" ? "rate_limit_exceeded" : "server_error",
          message: run.error?.message ?? "The run failed",
        }
      : null,
    incomplete_details: truncated ? { reason: "max_output_tokens" as const } : null,
    instructions: surface.instructions,
    max_output_tokens: surface.max_output_tokens,
    max_tool_calls: surface.max_tool_calls,
    metadata: run.metadata,
    model: run.agent_id,
    output: [...toolItems, ...outputOf(run, truncated, answerId)],
    parallel_tool_calls: surface.parallel_tool_calls,
    previous_response_id: surface.previous_response_id,
    conversation: { id: run.session_id },
    reasoning: surface.reasoning,
    temperature: surface.temperature,
    top_p: surface.top_p,
    presence_penalty: 0,
    frequency_penalty: 0,
    top_logprobs: 0,
    tool_choice: surface.tool_choice,
    tools: surface.tools,
    text: surface.text,
    truncation: surface.truncation,
    background: surface.background,
    service_tier: "default" as const,
    store: true,
    user: surface.user,
    safety_identifier: surface.safety_identifier,
    prompt_cache_key: surface.prompt_cache_key,
    prompt_cache_retention: null,
    usage: {
      input_tokens: m.input_tokens,
      input_tokens_details: { cached_tokens: m.cache_read_tokens, cache_write_tokens: m.cache_write_tokens },
      output_tokens: m.output_tokens,
      output_tokens_details: { reasoning_tokens: m.reasoning_tokens },
      total_tokens: m.total_tokens,
    },
  };
}

/** A stored input part as OpenAI's input content: media by their Agentry media id as `file_id`. */
function inputContentOf(part: Run["input"][number]) {
  if (part.type === "text") return { type: "input_text" as const, text: part.text };
  if (part.type === "image") return { type: "input_image" as const, detail: "auto" as const, file_id: part.media_id, image_url: null };
  return { type: "input_file" as const, file_id: part.media_id };
}

/**
 * `GET /v1/responses/{id}/input_items`: the run's input as one user message item. A response that
 * continued function calls shows the input of the turn it continued.
 */
export function renderInputItems(run: Run) {
  const id = `msg_in_${run.id}`;
  const item = {
    type: "message" as const,
    id,
    role: "user" as const,
    status: "completed" as const,
    content: run.input.map(inputContentOf),
  };
  return { object: "list" as const, data: [item], first_id: id, last_id: id, has_more: false };
}
