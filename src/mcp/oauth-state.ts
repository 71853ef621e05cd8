import { z } from "zod";

/**
 * An `mcp_oauth` credential's OAuth state, kept encrypted in the credential (docs/mcp.md, OAuth):
 * where the authorization server is, the client Agentry registered (or was given), the PKCE
 * verifier of an authorization in progress, and the tokens.
 */
export const oauthStateSchema = z.object({
  server_url: z.string(),
  authorization_server: z.string(),
  metadata: z.record(z.string(), z.unknown()).nullable(),
  client: z.object({ client_id: z.string(), client_secret: z.string().optional() }),
  resource: z.string().nullable(),
  redirect_uri: z.string(),
  scope: z.string().nullable(),
  /** The authorization in progress: the state's nonce and the PKCE code verifier. */
  pending: z.object({ nonce: z.string(), code_verifier: z.string() }).nullable(),
  tokens: z.object({ access_token: z.string(), refresh_token: z.string().optional(), expires_at: z.number().nullable() }).nullable(),
});
export type OAuthState = z.output<typeof oauthStateSchema>;
