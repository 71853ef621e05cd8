import { z } from "@hono/zod-openapi";
import { settingsOf, type Agent } from "../../agents";
import type { CreateResponseBody } from "./request";

const functionTool = z.object({
  type: z.literal("function"),
  name: z.string(),
  description: z.string().nullable(),
  parameters: z.record(z.string(), z.unknown()).nullable(),
  strict: z.boolean(),
});

/**
 * What a Response object says about the request that made it (docs/responses-api.md,
 * "Mapping"), kept with its run (`RunRecord.surface`) so that `retrieve` answers the same object
 * as `create`: the request's own fields, and the settings the run actually used.
 */
export const responseSurface = z.object({
  instructions: z.string().nullable(),
  tools: z.array(functionTool),
  tool_choice: z.union([z.enum(["auto", "none", "required"]), z.object({ type: z.literal("function"), name: z.string() })]),
  parallel_tool_calls: z.boolean(),
  temperature: z.number(),
  top_p: z.number(),
  max_output_tokens: z.number().nullable(),
  max_tool_calls: z.number().nullable(),
  reasoning: z.object({ effort: z.string().nullable(), summary: z.string().nullable() }),
  text: z.object({ format: z.record(z.string(), z.unknown()), verbosity: z.enum(["low", "medium", "high"]) }),
  truncation: z.enum(["auto", "disabled"]),
  background: z.boolean(),
  previous_response_id: z.string().nullable(),
  user: z.string().nullable(),
  safety_identifier: z.string().nullable(),
  prompt_cache_key: z.string().nullable(),
});

export type ResponseSurface = z.infer<typeof responseSurface>;

/** The defaults the Responses API reports for a setting nobody set. */
const DEFAULT_TEMPERATURE = 1;
const DEFAULT_TOP_P = 1;

/** The request's fields that the surface keeps, beside the run's agent. */
export type SurfaceRequest = Pick<
  CreateResponseBody,
  "tools" | "text" | "previous_response_id" | "user" | "safety_identifier" | "prompt_cache_key" | "background" | "tool_choice"
> & { instructions: string | null };

/**
 * The surface of a run: from its agent as the run uses it (its settings in force) and, for a run
 * made by `/v1/responses`, the request; a run made on Agentry's own routes has no request.
 */
export function surfaceOf(agent: Agent, request: SurfaceRequest | null): ResponseSurface {
  const settings = settingsOf(agent);
  const choice = settings.tool_choice;
  const format = request?.text?.format;
  return {
    instructions: request?.instructions ?? null,
    tools: (request?.tools ?? []).map((tool) => ({
      type: "function" as const,
      name: tool.name,
      description: tool.description ?? null,
      parameters: tool.parameters ?? null,
      strict: tool.strict ?? true,
    })),
    tool_choice: typeof choice === "object" ? { type: "function" as const, name: choice.name } : choice,
    parallel_tool_calls: settings.parallel_tool_calls,
    temperature: settings.temperature ?? DEFAULT_TEMPERATURE,
    top_p: settings.top_p ?? DEFAULT_TOP_P,
    max_output_tokens: agent.max_output_tokens,
    max_tool_calls: settings.max_tool_calls,
    reasoning: { effort: settings.reasoning?.effort ?? null, summary: settings.reasoning?.summary ?? null },
    text: { format: format ?? { type: "text" }, verbosity: request?.text?.verbosity ?? "medium" },
    truncation: agent.compaction?.enabled ? "auto" : "disabled",
    background: request?.background ?? false,
    previous_response_id: request?.previous_response_id ?? null,
    user: request?.user ?? null,
    safety_identifier: request?.safety_identifier ?? null,
    prompt_cache_key: request?.prompt_cache_key ?? null,
  };
}

/** The surface kept with a stored run, or the one its agent gives when it has none (or an unreadable one). */
export function storedSurface(run: { agent: Agent; surface?: Record<string, unknown> }): ResponseSurface {
  const parsed = responseSurface.safeParse(run.surface);
  return parsed.success ? parsed.data : surfaceOf(run.agent, null);
}
