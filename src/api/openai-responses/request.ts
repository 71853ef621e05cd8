import { RESPONSES_INCLUDABLE } from "../../providers/openai-limits";
import { z } from "@hono/zod-openapi";
import { objectJsonSchema, REASONING_EFFORTS, TOOL_NAME } from "../../agents";
import { CLIENT_ID } from "../../core/ids";
import { inputItem } from "./input-items";

const noBackend = (what: string) =>
  `${what} tools are not served: Agentry has no backend for OpenAI's hosted tools (give the agent a tool instead)`;

/** A client function tool of the request: the run pauses on its calls (an Agentry `client` tool). */
const functionTool = z.looseObject({
  type: z.literal("function"),
  name: z.string().regex(TOOL_NAME, "must match ^[a-zA-Z0-9_-]{1,64}$"),
  description: z.string().max(4096).nullable().optional(),
  parameters: objectJsonSchema.nullable().optional(),
  strict: z.boolean().nullable().optional(),
});

const TOOL_TYPES = ["function"];

/** A request tool: function tools only; the hosted tools are refused with the reason. */
const tool = z.discriminatedUnion("type", [functionTool], {
  error: (issue) => {
    const type = typeof issue.input === "object" && issue.input !== null && "type" in issue.input ? issue.input.type : undefined;
    return typeof type === "string" ? noBackend(type) : `must be a tool (${TOOL_TYPES.join(", ")})`;
  },
});

export type FunctionTool = z.infer<typeof functionTool>;

/** `tool_choice`: a mode, or one named function; hosted-tool choices are refused. */
const toolChoice = z.union([
  z.enum(["auto", "none", "required"]),
  z.looseObject({ type: z.literal("function", "only function tools can be chosen: Agentry has no hosted tools"), name: z.string().min(1) }),
]);

/** `text.format`: plain text, JSON mode, or a JSON schema the run's final answer must match (Agentry's structured output). */
const textConfig = z.looseObject({
  format: z
    .discriminatedUnion("type", [
      z.looseObject({ type: z.literal("text") }),
      z.looseObject({ type: z.literal("json_object") }),
      z.looseObject({
        type: z.literal("json_schema"),
        name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, "must match ^[a-zA-Z0-9_-]{1,64}$"),
        schema: objectJsonSchema,
        description: z.string().nullable().optional(),
        strict: z.boolean().nullable().optional(),
      }),
    ])
    .nullable()
    .optional(),
  verbosity: z.enum(["low", "medium", "high"]).nullable().optional(),
});

const reasoning = z.looseObject({
  effort: z.enum(REASONING_EFFORTS).nullable().optional(),
  summary: z.enum(["auto", "concise", "detailed"]).nullable().optional(),
  generate_summary: z.enum(["auto", "concise", "detailed"]).nullable().optional(),
});

const metadata = z.record(z.string().max(64), z.string().max(512)).refine((m) => Object.keys(m).length <= 16, "at most 16 keys");

/**
 * `POST /v1/responses` as OpenAI's API takes it (docs/responses-api.md, "Request fields"): every
 * field it accepts is accepted here; a field at its default is a no-op, a setting is honoured, and
 * only what would change the answer's meaning is refused, with the reason. An unknown field is
 * refused, as OpenAI refuses it.
 */
export const createResponseBody = z
  .strictObject({
    model: z.string().regex(CLIENT_ID, "must be an Agentry agent id"),
    input: z.union([z.string().min(1), z.array(inputItem).min(1)]),
    instructions: z.string().nullable().optional(),
    previous_response_id: z.string().nullable().optional(),
    conversation: z
      .union([z.string(), z.looseObject({ id: z.string() })])
      .nullable()
      .optional(),
    text: textConfig.nullable().optional(),
    tools: z.array(tool).max(128).nullable().optional(),
    tool_choice: toolChoice.nullable().optional(),
    parallel_tool_calls: z.boolean().nullable().optional(),
    temperature: z.number().min(0).max(2).nullable().optional(),
    top_p: z.number().min(0).max(1).nullable().optional(),
    max_output_tokens: z.number().int().min(16, "must be at least 16").max(200_000).nullable().optional(),
    max_tool_calls: z.number().int().min(1).max(1_000).nullable().optional(),
    reasoning: reasoning.nullable().optional(),
    truncation: z.enum(["auto", "disabled"]).nullable().optional(),
    metadata: metadata.nullable().optional(),
    store: z.boolean().nullable().optional(),
    stream: z.boolean().nullable().optional(),
    stream_options: z.looseObject({ include_obfuscation: z.boolean().nullable().optional() }).nullable().optional(),
    background: z.boolean().nullable().optional(),
    include: z.array(z.enum(RESPONSES_INCLUDABLE)).nullable().optional(),
    service_tier: z.enum(["auto", "default", "flex", "scale", "priority", "fast", "ultrafast"]).nullable().optional(),
    top_logprobs: z.literal(0, "log probabilities are not served: Agentry's providers do not all return them").nullable().optional(),
    user: z.string().max(256).nullable().optional(),
    safety_identifier: z.string().max(64).nullable().optional(),
    prompt_cache_key: z.string().max(64).nullable().optional(),
    prompt_cache_retention: z.enum(["in_memory", "24h"]).nullable().optional(),
    prompt: z.null({ error: "prompt templates are not served: Agentry has no prompt store; send instructions and input" }).optional(),
    context_management: z.array(z.unknown()).nullable().optional(),
  })
  .openapi("CreateResponse");

export type CreateResponseBody = z.infer<typeof createResponseBody>;
