import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { McpTool } from "../agents";
import { forgetCredential, loadCredential, type CredentialSecret } from "../credentials";
import { freshToken, widenScope } from "./oauth";
import { oauthCredentialOf, type McpOAuthEnv } from "./oauth-credential-client";
import { oauthStateSchema } from "./oauth-state";
import { changeOAuthState } from "./oauth-store";
import { connectMcp, type McpEndpoint } from "./connect";
import { McpScopeError, McpServerError, statusOf } from "./errors";

/**
 * An mcp_oauth credential's access token: the cached one while it has more than a minute left (no
 * round trip), else the one the credential's object answers (oauth-credential.ts: it refreshes once
 * for every caller and stores the new tokens, encrypted); a refused refresh (revoked grant) throws
 * McpServerError with `auth`.
 */
async function oauthToken(env: McpEnv, tenant: string, server: McpTool, secret: CredentialSecret): Promise<string> {
  const parsed = oauthStateSchema.safeParse(secret.oauth);
  const id = server.credential ?? "";
  if (!parsed.success) throw new McpServerError(`MCP server ${server.server_label}: credential ${id} holds no OAuth state`, true);
  const cached = freshToken(parsed.data, server.server_label);
  if (cached !== null) return cached;
  const answer = await oauthCredentialOf(env, tenant, id).token(tenant, id, server.server_label);
  // The stored tokens changed (here or in another isolate): this isolate's copy is stale.
  forgetCredential(tenant, id);
  if ("error" in answer) throw new McpServerError(answer.error, true);
  return answer.token;
}

/** What the connections read from the environment: the credentials' store, key and objects, the fence's mode. */
export type McpEnv = McpOAuthEnv & { DB: D1Database; CREDENTIALS_KEY?: string; LOOKUP_CACHE_MS?: string; ENVIRONMENT?: string };

/**
 * The MCP clients of one drive of a run: one connection (one MCP session) per server, opened on
 * first use and closed when the drive ends. A server that forgot the session (a restart: it answers
 * 404 to the session id, docs/mcp.md) gets a new `initialize` and the request once more: a 404 means
 * the request was not processed, so sending it again cannot run a tool twice.
 */
export class McpConnections {
  private readonly clients = new Map<string, Promise<Client>>();

  constructor(
    private readonly context: {
      env: McpEnv;
      tenant: string;
      servers: McpTool[];
      signal: AbortSignal;
      /** A bearer token for servers without a credential (the conformance probe's OAuth token). */
      bearer?: string;
      /** Told the scope a server without a credential needs (the conformance probe authorizes again with it). */
      onScopeNeeded?: (label: string, scope: string) => void;
    },
  ) {}

  /** The agent's MCP server with that label. */
  server(label: string): McpTool {
    const server = this.context.servers.find((s) => s.server_label === label);
    if (!server) throw new McpServerError(`The agent has no MCP server ${label}`, false);
    return server;
  }

  /**
   * Runs `request` on the server's session, with one new session if the server forgot it. A 403
   * `insufficient_scope` is recorded (scopeNeeded) and ends the run with an error naming the scope.
   */
  async use<T>(label: string, request: (client: Client) => Promise<T>): Promise<T> {
    try {
      return await this.attempt(label, request);
    } catch (error) {
      if (error instanceof McpScopeError) throw await this.scopeNeeded(this.server(label), error);
      throw error;
    }
  }

  private async attempt<T>(label: string, request: (client: Client) => Promise<T>): Promise<T> {
    const client = await this.client(label);
    try {
      return await request(client);
    } catch (error) {
      const forgotten = statusOf(error) === 404 && client.transport !== undefined && "sessionId" in client.transport;
      if (!forgotten || this.context.signal.aborted) throw error;
      this.clients.delete(label);
      void client.close().catch(() => {});
      return request(await this.client(label));
    }
  }

  /**
   * The server needs a larger scope than the token holds (docs/mcp.md, OAuth, step-up): a person
   * must approve it, so it is not asked for here. An mcp_oauth credential records it (its next
   * authorization asks for the union of its scope and this one; stored over the state as it is
   * then, oauth-store.ts); the error says to authorize the credential again.
   */
  private async scopeNeeded(server: McpTool, error: McpScopeError): Promise<McpServerError> {
    const { env, tenant } = this.context;
    const label = server.server_label;
    const id = server.credential;
    if (id === null) {
      this.context.onScopeNeeded?.(label, error.scope);
      return error;
    }
    const loaded = await loadCredential(env, tenant, id).catch(() => null);
    if (loaded?.info.type !== "mcp_oauth") return new McpServerError(`${error.message}, which the token of credential ${id} lacks`, true);
    const recorded = await changeOAuthState(env, tenant, id, (state) => widenScope(state, error.scope)).catch(() => null);
    forgetCredential(tenant, id);
    const needed = new McpScopeError(label, recorded?.scope ?? error.scope);
    return new McpServerError(
      `${needed.message}; authorize the credential ${id} again (POST /v1/credentials/${id}/authorize) to grant it`,
      true,
    );
  }

  /** Closes every connection (the legacy transport's stream included); the servers' sessions are left to expire. */
  async close(): Promise<void> {
    const open = [...this.clients.values()];
    this.clients.clear();
    await Promise.all(open.map((client) => client.then((c) => c.close()).catch(() => {})));
  }

  private client(label: string): Promise<Client> {
    let client = this.clients.get(label);
    if (!client) {
      client = this.endpoint(this.server(label)).then((endpoint) => connectMcp(endpoint, this.context.signal));
      // A failed connect is not kept: the next call tries again.
      client.catch(() => this.clients.delete(label));
      this.clients.set(label, client);
    }
    return client;
  }

  /** The server's URL and the headers of its credential (a bearer token, extra headers). */
  private async endpoint(server: McpTool): Promise<McpEndpoint> {
    const { env, tenant } = this.context;
    const base = { server_label: server.server_label, url: server.server_url, environment: env.ENVIRONMENT };
    if (server.credential === null)
      return { ...base, headers: this.context.bearer ? { authorization: `Bearer ${this.context.bearer}` } : {} };
    const { info, secret } = await loadCredential(env, tenant, server.credential).catch((error: unknown) => {
      throw new McpServerError(
        `MCP server ${server.server_label}: ${error instanceof Error ? error.message : "credential unreadable"}`,
        true,
      );
    });
    if (info.type === "provider") {
      throw new McpServerError(`MCP server ${server.server_label}: credential ${info.id} is not an mcp credential`, true);
    }
    const headers: Record<string, string> = { ...secret.headers };
    if (info.type === "mcp_oauth") {
      headers.authorization = `Bearer ${await oauthToken(env, tenant, server, secret)}`;
    } else if (secret.api_key !== "") {
      headers.authorization = `Bearer ${secret.api_key}`;
    }
    return { ...base, headers };
  }
}
