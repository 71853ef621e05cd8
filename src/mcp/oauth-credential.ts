import { DurableObject } from "cloudflare:workers";
import { credentialsKey, decryptSecret, encryptSecret } from "../credentials/crypto";
import { findCredentialRow, updateCredentialSecret } from "../db/credentials";
import { describeFailure } from "./errors";
import { freshToken, refreshTokens, widenScope } from "./oauth";
import type { TokenAnswer } from "./oauth-credential-client";
import { oauthStateSchema, type OAuthState } from "./oauth-state";

/** What the object reads: the credentials' store and key, the outbound fence's mode. */
export type McpOAuthObjectEnv = { DB: D1Database; CREDENTIALS_KEY?: string; ENVIRONMENT?: string };

/**
 * The one writer of an mcp_oauth credential's OAuth state while runs use it (docs/mcp.md, OAuth):
 * one object per credential. Many authorization servers rotate refresh tokens and revoke the whole
 * grant when a rotated one is used again, so two sessions must never refresh with the same token:
 * here every change (a refresh, a wider scope) runs after the one before it, each reads the stored
 * state afresh from D1 (never an isolate's cached copy), and callers asking for a token while a
 * refresh is in flight share its answer. A caller whose cached token still has more than a minute
 * left never comes here (src/mcp/connections.ts).
 */
export class McpOAuthCredential extends DurableObject<McpOAuthObjectEnv> {
  private last: Promise<unknown> = Promise.resolve();
  private refreshing: Promise<TokenAnswer> | null = null;

  /** The stored access token if it is fresh (another caller refreshed it), else a refreshed one, stored encrypted. */
  token(tenant: string, id: string, label: string): Promise<TokenAnswer> {
    this.refreshing ??= this.serially(async () => {
      const { secret, state } = await this.read(tenant, id, label);
      const stored = freshToken(state, label);
      if (stored !== null) return { token: stored };
      const refreshed = await refreshTokens(state, label, this.env.ENVIRONMENT);
      await this.write(tenant, id, secret, refreshed);
      return { token: refreshed.tokens?.access_token ?? "" };
    }).finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  /**
   * Records the larger scope a server asked for (a 403 `insufficient_scope`): the credential's next
   * authorization (`POST /v1/credentials/{id}/authorize`) asks for it. Answers the scope now stored.
   */
  async requireScope(tenant: string, id: string, label: string, scope: string): Promise<{ scope: string | null } | { error: string }> {
    return this.serially(async () => {
      const { secret, state } = await this.read(tenant, id, label);
      const wider = widenScope(state, scope);
      if (wider) await this.write(tenant, id, secret, wider);
      return { scope: (wider ?? state).scope };
    });
  }

  /** Runs `change` after every change asked before it; a failure is answered, not thrown (it crosses RPC). */
  private serially<T extends object>(change: () => Promise<T>): Promise<T | { error: string }> {
    const next = this.last.then(change).catch((error: unknown) => ({ error: describeFailure(error) }));
    this.last = next;
    return next;
  }

  private async read(tenant: string, id: string, label: string) {
    const row = await findCredentialRow(this.env.DB, tenant, id);
    if (!row) throw new Error(`MCP server ${label}: credential ${id} does not exist`);
    const secret = await decryptSecret(await credentialsKey(this.env.CREDENTIALS_KEY), tenant, id, row.ciphertext);
    const parsed = oauthStateSchema.safeParse(secret.oauth);
    if (!parsed.success) throw new Error(`MCP server ${label}: credential ${id} holds no OAuth state`);
    return { secret, state: parsed.data };
  }

  private async write(tenant: string, id: string, secret: Awaited<ReturnType<typeof decryptSecret>>, state: OAuthState) {
    const key = await credentialsKey(this.env.CREDENTIALS_KEY);
    await updateCredentialSecret(this.env.DB, tenant, id, await encryptSecret(key, tenant, id, { ...secret, oauth: state }));
  }
}
