export { callMcpTool, type McpCallContext, type McpOutcome } from "./call";
export { McpConnections, type McpEnv } from "./connections";
export { McpServerError, describeFailure } from "./errors";
export { mcpToolName } from "./names";
export { listMcpTools, parseToolList, TOOL_LIST_TTL_MS, type McpToolEntry } from "./tool-list";
