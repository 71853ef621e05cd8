import "vitest";

declare module "vitest" {
  export interface ProvidedContext {
    mockModelUrl: string;
    toolServerUrl: string;
    gatewayUrl: string;
    foreignUpstreamUrl: string;
    /** test/node/mcp-server.ts: server-everything over Streamable HTTP (and the older HTTP+SSE). */
    mcpServerUrl: string;
    /** vitest.reliability.config.ts: the soak's minutes (RELIABILITY_SOAK_MINUTES), 0 outside its long mode. */
    soakMinutes: number;
  }
}
