import { extractWWWAuthenticateParams } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { checkOutboundUrl, isRedirect } from "../core/url-guard";
import { BUILD_VERSION } from "../core/version";
import { McpScopeError, McpServerError, statusOf } from "./errors";
import { scopeTokens } from "./oauth-scope";

/** Where an MCP server is and what every request to it carries (its credential's headers). */
export type McpEndpoint = { server_label: string; url: string; headers: Record<string, string>; environment: string | undefined };

/** Connecting (initialize) may take this long. */
const CONNECT_TIMEOUT_MS = 15_000;

/**
 * The fetch every MCP request goes through: the outbound fence on each URL (the legacy transport
 * posts to an endpoint the server names), the credential's headers added here (the SDK never holds
 * them), redirects never followed, a 403 `insufficient_scope` thrown as McpScopeError (naming the
 * scope its challenge asks for). `noGetStream`: the optional standalone GET stream of Streamable
 * HTTP is answered 405 locally, as by a server without one: Agentry takes no server-initiated
 * requests, and an open stream would hold one of the Worker's six connections for the whole run.
 * A GET with `Last-Event-ID` goes out: it resumes a request's stream that the server closed before
 * its answer (SEP-1699; the SDK sends it after the server's `retry` delay).
 */
function fencedFetch(endpoint: McpEndpoint, noGetStream: boolean): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    if (noGetStream && request.method === "GET" && !request.headers.has("last-event-id")) return new Response(null, { status: 405 });
    const refused = checkOutboundUrl(request.url, endpoint.environment);
    if (refused) throw new McpServerError(`MCP server ${endpoint.server_label}: URL refused: ${refused}`, false);
    const headers = new Headers(request.headers);
    for (const [name, value] of Object.entries(endpoint.headers)) headers.set(name, value);
    const response = await fetch(new Request(request, { headers, redirect: "manual" }));
    if (isRedirect(response.status)) {
      await response.body?.cancel();
      throw new McpServerError(
        `MCP server ${endpoint.server_label} answered a redirect (status ${response.status}); redirects are not followed`,
        false,
      );
    }
    if (response.status === 403) {
      const challenge = extractWWWAuthenticateParams(response);
      const scope = challenge.error === "insufficient_scope" ? scopeTokens(challenge.scope ?? "") : "";
      if (scope !== "") {
        await response.body?.cancel();
        throw new McpScopeError(endpoint.server_label, scope);
      }
    }
    return response;
  };
}

const newClient = () =>
  new Client({ name: "agentry", version: BUILD_VERSION }, { capabilities: {}, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });

/**
 * A connected MCP client (initialize done) over Streamable HTTP; a server that answers the
 * Streamable HTTP POST with a 4xx other than 401 / 403 gets the older HTTP+SSE transport instead
 * (the SDK's backwards-compatibility pattern). A refused credential throws McpServerError with `auth`.
 */
export async function connectMcp(endpoint: McpEndpoint, signal: AbortSignal): Promise<Client> {
  const url = new URL(endpoint.url);
  const options = { signal: AbortSignal.any([signal, AbortSignal.timeout(CONNECT_TIMEOUT_MS)]), timeout: CONNECT_TIMEOUT_MS };
  const client = newClient();
  try {
    await client.connect(new StreamableHTTPClientTransport(url, { fetch: fencedFetch(endpoint, true) }), options);
    return client;
  } catch (error) {
    await client.close().catch(() => {});
    const status = statusOf(error);
    if (status === 401 || status === 403) throw authError(endpoint, status);
    if (status === null || status < 400 || status >= 500 || signal.aborted) throw error;
  }
  const legacy = newClient();
  try {
    const fetchFn = fencedFetch(endpoint, false);
    await legacy.connect(new SSEClientTransport(url, { fetch: fetchFn, eventSourceInit: { fetch: fetchFn } }), options);
    return legacy;
  } catch (error) {
    await legacy.close().catch(() => {});
    const status = statusOf(error);
    if (status === 401 || status === 403) throw authError(endpoint, status);
    throw error;
  }
}

/** The run-ending error of a refused credential. */
export const authError = (endpoint: Pick<McpEndpoint, "server_label">, status: number) =>
  new McpServerError(`MCP server ${endpoint.server_label} refused Agentry's credentials (HTTP ${status})`, true);
