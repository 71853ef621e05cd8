import { DurableObject } from "cloudflare:workers";
import { freshToken, refreshTokens } from "./oauth";
import { changeOAuthState, readOAuthState } from "./oauth-store";

/** An access token, or why there is none (the run ends with it: the user must authorize again). */
export type TokenAnswer = { token: string } | { error: string };

/** What the object reads: the credentials' store and key, the outbound fence's mode. */
export type McpOAuthObjectEnv = { DB: D1Database; CREDENTIALS_KEY?: string; ENVIRONMENT?: string };

/**
 * The one place an mcp_oauth credential's tokens are refreshed (docs/mcp.md, OAuth, Refresh): one
 * object per credential. Many authorization servers rotate refresh tokens and revoke the whole
 * grant when a rotated one is used again, so two sessions must never refresh with the same token:
 * here a refresh reads the stored state afresh from D1 (never an isolate's cached copy), answers
 * the stored token when another caller refreshed it already, and callers asking while a refresh is
 * in flight share it. The new tokens are stored over the state as it is then (oauth-store.ts: the
 * routes that authorize the credential anew write it too). A caller whose cached token still has
 * more than a minute left never comes here (src/mcp/connections.ts).
 */
export class McpOAuthCredential extends DurableObject<McpOAuthObjectEnv> {
  private refreshing: Promise<TokenAnswer> | null = null;

  /** The stored access token if it is fresh (another caller refreshed it), else a refreshed one, stored encrypted. */
  token(tenant: string, id: string, label: string): Promise<TokenAnswer> {
    this.refreshing ??= this.refresh(tenant, id, label)
      // A failure is answered, not thrown: it crosses RPC.
      .catch((error: unknown) => ({ error: error instanceof Error ? error.message : `MCP server ${label}: the refresh failed` }))
      .finally(() => {
        this.refreshing = null;
      });
    return this.refreshing;
  }

  private async refresh(tenant: string, id: string, label: string): Promise<TokenAnswer> {
    const stored = await readOAuthState(this.env, tenant, id);
    if (!stored) throw new Error(`MCP server ${label}: credential ${id} is not an mcp_oauth credential`);
    const fresh = freshToken(stored.state, label);
    if (fresh !== null) return { token: fresh };
    const used = stored.state.tokens?.refresh_token;
    const refreshed = await refreshTokens(stored.state, label, this.env.ENVIRONMENT);
    // Kept unless the credential was authorized anew meanwhile (its new tokens win over these).
    const now = await changeOAuthState(this.env, tenant, id, (current) =>
      current.tokens?.refresh_token === used ? { ...current, tokens: refreshed.tokens } : null,
    );
    const token = now?.tokens?.access_token;
    if (!token) throw new Error(`MCP server ${label}: credential ${id} is no longer authorized; authorize the credential again`);
    return { token };
  }
}
