import { z } from "zod";
import { CLIENT_ID } from "../core/ids";
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

/** An MCP server's label: the prefix of its tools' names (`<server_label>__<tool>`, docs/mcp.md). */
export const SERVER_LABEL = /^[a-zA-Z0-9_-]{1,32}$/;

const mcpTool = z.strictObject({
  type: z.literal("mcp"),
  server_label: z.string().regex(SERVER_LABEL, "must match ^[a-zA-Z0-9_-]{1,32}$"),
  /** Checked by the URL guard at request time (it depends on `ENVIRONMENT`). */
  server_url: z.string().min(1).max(2048),
  /** A tenant credential of type `mcp` (`/v1/credentials`); checked at request time. */
  credential: z.string().regex(CLIENT_ID, "must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$").nullable().default(null),
  /** The server's tools offered to the model (their names on the server); null: all of them. */
  allowed_tools: z.array(z.string().min(1).max(256)).min(1).max(128).nullable().default(null),
  requires_approval: requiresApproval,
});

/** One entry of an agent's `tools` (docs/api.md, Tools). */
export const toolSchema = z.discriminatedUnion("type", [webhookTool, clientTool, builtinTool, mcpTool]);

/** The name a tool of the agent answers to; an MCP server's tools are named `<server_label>__…` (its prefix here). */
export const toolNameOf = (tool: z.output<typeof toolSchema>) => (tool.type === "mcp" ? `${tool.server_label}__` : tool.name);

/**
 * An agent's `tools`: names unique within the agent, server labels unique, and no other tool's
 * name in an MCP server's namespace (`<server_label>__…`).
 */
export const toolsSchema = z
  .array(toolSchema)
  .max(128)
  .superRefine((tools, ctx) => {
    const seen = new Set<string>();
    tools.forEach((tool, index) => {
      const name = toolNameOf(tool);
      const field = tool.type === "mcp" ? "server_label" : "name";
      if (seen.has(name)) {
        const what = tool.type === "mcp" ? `server_label "${tool.server_label}"` : `tool name "${name}"`;
        ctx.addIssue({ code: "custom", path: [index, field], message: `duplicate ${what}` });
      }
      seen.add(name);
    });
    tools.forEach((tool, index) => {
      if (tool.type === "mcp") return;
      const server = tools.find((other) => other.type === "mcp" && tool.name.startsWith(`${other.server_label}__`));
      if (server?.type === "mcp") {
        ctx.addIssue({
          code: "custom",
          path: [index, "name"],
          message: `starts with "${server.server_label}__", the names of MCP server ${server.server_label}'s tools`,
        });
      }
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
/** A remote MCP server whose tools the model may call (docs/mcp.md). */
export type McpTool = z.output<typeof mcpTool>;
/** The builtin tools' names. */
export type BuiltinToolName = (typeof BUILTIN_TOOLS)[number];
