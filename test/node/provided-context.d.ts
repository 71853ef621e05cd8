export {};

declare module "vitest" {
  export interface ProvidedContext {
    mockModelUrl: string;
    toolServerUrl: string;
    gatewayUrl: string;
    foreignUpstreamUrl: string;
  }
}
