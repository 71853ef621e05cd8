import type { McpOAuthCredential } from "./oauth-credential";

/** The binding of the mcp_oauth credentials' objects (wrangler.toml `MCP_OAUTH`). */
export type McpOAuthEnv = { MCP_OAUTH: DurableObjectNamespace<McpOAuthCredential> };

/** The object of one mcp_oauth credential (oauth-credential.ts), named by its tenant and id. */
export const oauthCredentialOf = (env: McpOAuthEnv, tenant: string, id: string) =>
  env.MCP_OAUTH.get(env.MCP_OAUTH.idFromName(JSON.stringify([tenant, id])));
