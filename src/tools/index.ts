import { checkOutput, describeErrors, type Agent, type Tool } from "../agents";
import type { ToolCallBlock } from "../core/messages";
import type { ToolSpec } from "../providers/types";
import { jsonDepthExcess, MAX_JSON_DEPTH } from "../core/json-depth";
import { TOO_DEEP_ARGUMENTS } from "../providers/tool-calls";
import { builtinSpecs, runBuiltin } from "./builtin";
import { toolError } from "./outcome";
import { callWebhook } from "./webhook";
import { callMcpTool, type McpCallContext, type McpOutcome, type McpToolEntry } from "../mcp";

export type { ToolOutcome } from "./outcome";

/** The tools of a run as the model sees them: the agent's, then its MCP servers' (listed when the run started). */
export function toolSpecs(agent: Agent, mcpTools: McpToolEntry[] = []): ToolSpec[] {
  const own = agent.tools.flatMap((tool): ToolSpec[] => {
    if (tool.type === "mcp") return [];
    if (tool.type === "builtin") return [{ name: tool.name, ...builtinSpecs[tool.name] }];
    return [{ name: tool.name, description: tool.description, parameters: tool.parameters, ...(tool.strict ? { strict: true } : {}) }];
  });
  return [...own, ...mcpTools.map(({ name, description, parameters }) => ({ name, parameters, ...(description ? { description } : {}) }))];
}

/** The MCP tool a call names, from the run's list. */
export const findMcpEntry = (mcpTools: McpToolEntry[], name: string): McpToolEntry | undefined => mcpTools.find((t) => t.name === name);

/** The agent's tool a call names; for an MCP server's tool, that server's entry of the agent's `tools`. */
export function findTool(agent: Agent, name: string, mcpTools: McpToolEntry[] = []): Tool | undefined {
  const entry = findMcpEntry(mcpTools, name);
  if (entry) return agent.tools.find((t) => t.type === "mcp" && t.server_label === entry.server_label);
  return agent.tools.find((t) => t.type !== "mcp" && t.name === name);
}

export type ToolContext = {
  agent: Agent;
  run_id: string;
  session_id: string;
  webhookSecret: string | undefined;
  environment: string | undefined;
  /** The run's abort signal: a cancel aborts the call in flight. */
  signal: AbortSignal;
  /** The run's MCP tools and connections, when its agent has MCP servers. */
  mcp?: { tools: McpToolEntry[]; call: Omit<McpCallContext, "signal"> };
};

/**
 * Adapters keep arguments that are not a JSON object (within MAX_JSON_DEPTH levels) as the raw
 * string the model sent: such a call is answered with a tool error, whatever the tool's type.
 */
export const hasObjectArguments = (call: ToolCallBlock): boolean =>
  typeof call.arguments === "object" && call.arguments !== null && !Array.isArray(call.arguments);

function argumentsProblem(call: ToolCallBlock): string {
  const tooDeep = call.arguments === TOO_DEEP_ARGUMENTS || (typeof call.arguments === "string" && jsonDepthExcess(call.arguments) !== null);
  return tooDeep
    ? `The arguments of ${call.name} nest deeper than ${MAX_JSON_DEPTH} levels; send a flatter JSON object`
    : `The arguments of ${call.name} must be a JSON object`;
}

/**
 * Why a strict tool's call may not run: its arguments miss the tool's `parameters` (the model
 * reads the reasons as the call's tool error and may call again). Null when it may run.
 */
export function strictArgumentsProblem(agent: Agent, call: ToolCallBlock): string | null {
  const tool = findTool(agent, call.name);
  if (!tool || tool.type === "builtin" || tool.type === "mcp" || !tool.strict || !hasObjectArguments(call)) return null;
  const check = checkOutput(JSON.stringify(call.arguments), tool.parameters);
  if (check.ok) return null;
  return `The arguments of ${call.name} do not match its parameters, so it was not run:\n${describeErrors(check.errors)}`;
}

/** Executes a server-side tool call (webhook, builtin or MCP). Client tools pause the run instead. */
export async function executeTool(call: ToolCallBlock, context: ToolContext): Promise<McpOutcome> {
  const tool = findTool(context.agent, call.name, context.mcp?.tools);
  if (!tool) return toolError(`Unknown tool: ${call.name}`);
  if (!hasObjectArguments(call)) return toolError(argumentsProblem(call));
  const mismatch = strictArgumentsProblem(context.agent, call);
  if (mismatch) return toolError(mismatch);
  switch (tool.type) {
    case "webhook":
      return callWebhook(
        {
          url: tool.url,
          timeout_ms: tool.timeout_ms,
          tool_call_id: call.tool_call_id,
          name: call.name,
          arguments: call.arguments,
          run_id: context.run_id,
          session_id: context.session_id,
        },
        context.webhookSecret,
        context.environment,
        context.signal,
      );
    case "builtin":
      return runBuiltin(tool.name, call.arguments, {
        metadata: context.agent.metadata,
        environment: context.environment,
        signal: context.signal,
      });
    case "client":
      return toolError(`Tool ${call.name} is answered by the client`);
    case "mcp": {
      const entry = context.mcp && findMcpEntry(context.mcp.tools, call.name);
      if (!context.mcp || !entry) return toolError(`Unknown tool: ${call.name}`);
      return callMcpTool(entry, call.arguments as Record<string, unknown>, { ...context.mcp.call, signal: context.signal });
    }
  }
}
