import { DurableObject } from "cloudflare:workers";
import { describeFailure } from "./errors";
import { freshToken, refreshTokens, widenScope } from "./oauth";
import type { TokenAnswer } from "./oauth-credential-client";
import type { OAuthState } from "./oauth-state";
import { changeOAuthState, readOAuthState } from "./oauth-store";

/** What the object reads: the credentials' store and key, the outbound fence's mode. */
export type McpOAuthObjectEnv = { DB: D1Database; CREDENTIALS_KEY?: string; ENVIRONMENT?: string };

/**
 * The one writer of an mcp_oauth credential's OAuth state while runs use it (docs/mcp.md, OAuth):
 * one object per credential. Many authorization servers rotate refresh tokens and revoke the whole
 * grant when a rotated one is used again, so two sessions must never refresh with the same token:
 * here every change (a refresh, a wider scope) runs after the one before it, each reads the stored
 * state afresh from D1 (never an isolate's cached copy) and stores only over what it read
 * (oauth-store.ts: the routes that authorize it anew write it too), and callers asking for a token
 * while a refresh is in flight share its answer. A caller whose cached token still has more than a minute
 * left never comes here (src/mcp/connections.ts).
 */
export class McpOAuthCredential extends DurableObject<McpOAuthObjectEnv> {
  private last: Promise<unknown> = Promise.resolve();
  private refreshing: Promise<TokenAnswer> | null = null;

  /** The stored access token if it is fresh (another caller refreshed it), else a refreshed one, stored encrypted. */
  token(tenant: string, id: string, label: string): Promise<TokenAnswer> {
    this.refreshing ??= this.serially(async () => {
      const state = await this.read(tenant, id, label);
      const stored = freshToken(state, label);
      if (stored !== null) return { token: stored };
      const used = state.tokens?.refresh_token;
      const refreshed = await refreshTokens(state, label, this.env.ENVIRONMENT);
      // Kept unless the credential was authorized anew meanwhile (its new tokens win over these).
      const now = await changeOAuthState(this.env, tenant, id, (current) =>
        current.tokens?.refresh_token === used ? { ...current, tokens: refreshed.tokens } : null,
      );
      const token = now?.tokens?.access_token;
      return token ? { token } : { error: `MCP server ${label}: credential ${id} is no longer authorized; authorize the credential again` };
    }).finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  /**
   * Records the larger scope a server asked for (a 403 `insufficient_scope`): the credential's next
   * authorization (`POST /v1/credentials/{id}/authorize`) asks for it. Answers the scope now stored.
   */
  requireScope(tenant: string, id: string, label: string, scope: string): Promise<{ scope: string | null } | { error: string }> {
    return this.serially(async () => {
      const now = await changeOAuthState(this.env, tenant, id, (state) => widenScope(state, scope));
      if (!now) throw new Error(`MCP server ${label}: credential ${id} holds no OAuth state`);
      return { scope: now.scope };
    });
  }

  /** Runs `change` after every change asked before it; a failure is answered, not thrown (it crosses RPC). */
  private serially<T extends object>(change: () => Promise<T>): Promise<T | { error: string }> {
    const next = this.last.then(change).catch((error: unknown) => ({ error: describeFailure(error) }));
    this.last = next;
    return next;
  }

  private async read(tenant: string, id: string, label: string): Promise<OAuthState> {
    const stored = await readOAuthState(this.env, tenant, id);
    if (!stored) throw new Error(`MCP server ${label}: credential ${id} is not an authorized mcp_oauth credential`);
    return stored.state;
  }
}
