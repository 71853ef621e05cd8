import "vitest";

declare module "vitest" {
  export interface ProvidedContext {
    mockModelUrl: string;
    toolServerUrl: string;
    gatewayUrl: string;
    foreignUpstreamUrl: string;
    /** vitest.reliability.config.ts: the soak's minutes (RELIABILITY_SOAK_MINUTES), 0 outside its long mode. */
    soakMinutes: number;
  }
}
