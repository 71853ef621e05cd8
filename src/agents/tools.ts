import { z } from "zod";
import { noParameters, objectJsonSchema } from "./json-schema";

/** Tool names the providers accept (Anthropic and OpenAI share this rule). */
export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Tools that run inside the Worker. */
export const BUILTIN_TOOLS = ["current_time", "http_get"] as const;

const toolName = z.string().regex(TOOL_NAME, "must match ^[a-zA-Z0-9_-]{1,64}$");
const description = z.string().max(4096).optional();
const parameters = objectJsonSchema.default(noParameters);
/** The model's arguments must fit `parameters`: sent as strict where the provider has it, and checked before the tool runs. */
const strict = z.boolean().optional();
/** The run pauses for a person's decision before each call of the tool (docs/tools.md, Approvals). */
const requiresApproval = z.boolean().default(false);

const webhookTool = z.strictObject({
  type: z.literal("webhook"),
  name: toolName,
  description,
  parameters,
  strict,
  /** Checked by the URL guard at request time (it depends on `ENVIRONMENT`). */
  url: z.string().min(1).max(2048),
  timeout_ms: z.number().int().min(100).max(60_000).default(10_000),
  requires_approval: requiresApproval,
});

const clientTool = z.strictObject({
  type: z.literal("client"),
  name: toolName,
  description,
  parameters,
  strict,
});

const builtinTool = z.strictObject({
  type: z.literal("builtin"),
  name: z.enum(BUILTIN_TOOLS),
  requires_approval: requiresApproval,
});

/** One entry of an agent's `tools` (docs/api.md, Tools). */
export const toolSchema = z.discriminatedUnion("type", [webhookTool, clientTool, builtinTool]);

/** An agent's `tools`: names unique within the agent. */
export const toolsSchema = z
  .array(toolSchema)
  .max(128)
  .superRefine((tools, ctx) => {
    const seen = new Set<string>();
    tools.forEach((tool, index) => {
      if (seen.has(tool.name)) {
        ctx.addIssue({ code: "custom", path: [index, "name"], message: `duplicate tool name "${tool.name}"` });
      }
      seen.add(tool.name);
    });
  });

/** A tool of an agent, defaults filled; switch on `type`. */
export type Tool = z.output<typeof toolSchema>;
/** Agentry POSTs the call to `url` (signed) and the answer is the result. */
export type WebhookTool = z.output<typeof webhookTool>;
/** The run pauses and the client continues it with the result. */
export type ClientTool = z.output<typeof clientTool>;
/** Runs inside the Worker. */
export type BuiltinTool = z.output<typeof builtinTool>;
/** The builtin tools' names. */
export type BuiltinToolName = (typeof BUILTIN_TOOLS)[number];
