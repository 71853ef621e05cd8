/**
 * Stands in for `ajv` and `ajv-formats` in the Worker bundle (wrangler.toml `[alias]`): the MCP
 * SDK's client imports its ajv validator at module level, but Agentry always passes the SDK's
 * `CfWorkerJsonSchemaValidator` (src/mcp/connect.ts), so ajv is never constructed. Keeping it
 * out saves about 35 KiB of the gzipped bundle (docs/performance.md).
 */
export default class NoAjv {
  constructor() {
    throw new Error("ajv is not bundled: pass the MCP client a jsonSchemaValidator");
  }
}
