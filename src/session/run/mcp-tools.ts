import type { McpTool } from "../../agents";
import { describeFailure, listMcpTools, McpConnections, McpServerError, parseToolList, type McpToolEntry } from "../../mcp";
import type { RunError, RunRecord } from "../../run-model/run-record";
import type { LoopHost } from "./loop-host";

/** The MCP connections of one drive of a run, or null when its agent has no MCP server. */
export function mcpConnectionsOf(host: LoopHost, run: RunRecord, signal: AbortSignal): McpConnections | null {
  const servers = run.agent.tools.filter((tool): tool is McpTool => tool.type === "mcp");
  return servers.length === 0 ? null : new McpConnections({ env: host.env, tenant: host.tenant(), servers, signal });
}

/**
 * The MCP tools the run offers: the list kept with the run, or, on its first model step, every
 * server's list (cached a minute per agent version), kept with the run from then on (docs/mcp.md).
 * A server that cannot be listed ends the run with a `tool_error` naming it.
 */
export async function runMcpTools(
  host: LoopHost,
  run: RunRecord,
  connections: McpConnections | null,
  signal: AbortSignal,
): Promise<McpToolEntry[] | RunError> {
  if (!connections) return [];
  const stored = host.store.getMcpTools(run.id);
  if (stored !== null) return parseToolList(stored);
  let tools: McpToolEntry[];
  try {
    tools = await listMcpTools(run.agent, host.tenant(), connections, signal);
  } catch (error) {
    const auth = error instanceof McpServerError && error.auth;
    const message =
      error instanceof McpServerError ? error.message : `An MCP server's tools could not be listed: ${describeFailure(error)}`;
    return { type: "tool_error", message, retryable: !auth };
  }
  host.commit(() => {
    host.store.putMcpTools(run.id, JSON.stringify(tools));
    return [];
  });
  return tools;
}
