declare module "@modelcontextprotocol/server-everything/dist/server/index.js" {
  import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
  /** The reference server's factory: a McpServer with every tool, and its per-session cleanup. */
  export function createServer(): { server: McpServer; cleanup: (sessionId?: string) => void };
}
