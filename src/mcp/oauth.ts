import {
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  exchangeAuthorization,
  extractWWWAuthenticateParams,
  refreshAuthorization,
  registerClient,
  startAuthorization,
} from "@modelcontextprotocol/sdk/client/auth.js";
import type { AuthorizationServerMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { checkResourceAllowed } from "@modelcontextprotocol/sdk/shared/auth-utils.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { decodeBase64Url, encodeBase64Url } from "../core/base64";
import { BUILD_VERSION } from "../core/version";
import { checkOutboundUrl, isRedirect } from "../core/url-guard";
import { describeFailure, McpServerError } from "./errors";
import type { OAuthState } from "./oauth-state";
import { unionScope } from "./oauth-scope";

/** An access token is refreshed when it has less than this left. */
const REFRESH_MARGIN_MS = 60_000;

/** Every OAuth request (discovery, registration, token): the outbound fence, redirects not followed. */
function oauthFetch(environment: string | undefined): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const refused = checkOutboundUrl(request.url, environment);
    if (refused) throw new McpServerError(`OAuth URL ${new URL(request.url).origin} refused: ${refused}`, false);
    const response = await fetch(new Request(request, { redirect: "manual", signal: AbortSignal.timeout(15_000) }));
    if (isRedirect(response.status)) {
      await response.body?.cancel();
      throw new McpServerError(
        `${new URL(request.url).origin} answered a redirect (status ${response.status}); redirects are not followed`,
        false,
      );
    }
    return response;
  };
}

/** The `state` parameter: the credential it belongs to and a nonce only its encrypted state knows. */
export function encodeState(tenant: string, id: string, nonce: string): string {
  return encodeBase64Url(new TextEncoder().encode(JSON.stringify([tenant, id, nonce])));
}

/** The tenant, credential id and nonce of a `state`, or null when it is not one of ours. */
export function decodeState(state: string): { tenant: string; id: string; nonce: string } | null {
  try {
    const value: unknown = JSON.parse(new TextDecoder().decode(decodeBase64Url(state)));
    if (!Array.isArray(value) || value.length !== 3 || !value.every((v) => typeof v === "string")) return null;
    const [tenant, id, nonce] = value as [string, string, string];
    return { tenant, id, nonce };
  } catch {
    return null;
  }
}

export type OAuthStart = {
  server_url: string;
  redirect_uri: string;
  client_id: string | null;
  client_secret: string | null;
  /**
   * The https URL of Agentry's client metadata document (`GET /oauth/client-metadata.json`):
   * Agentry's client id at an authorization server that fetches client metadata documents (CIMD);
   * null where it could not be fetched (an http origin).
   */
  client_metadata_url: string | null;
  scope: string | null;
  tenant: string;
  id: string;
  environment: string | undefined;
};

/** Agentry's OAuth client as it describes itself: to dynamic registration, and in its client metadata document. */
export const clientMetadataOf = (redirectUri: string) => ({
  client_name: "Agentry",
  redirect_uris: [redirectUri],
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  token_endpoint_auth_method: "none",
});

/**
 * Starts the authorization code flow with PKCE (docs/mcp.md, OAuth): the server's protected
 * resource metadata names its authorization server (a server without it: its own origin), whose
 * metadata gives the endpoints; the client is the one given, else Agentry's client metadata document's
 * URL where the server fetches such documents (CIMD), else one registered dynamically. Answers the
 * state to keep (encrypted) and the URL to send the user to.
 */
export async function beginOAuth(start: OAuthStart): Promise<{ state: OAuthState; authorization_url: string }> {
  const fetchFn = oauthFetch(start.environment);
  try {
    const challenge = await challengeOf(start.server_url, fetchFn);
    const resourceMetadata = await discoverOAuthProtectedResourceMetadata(
      start.server_url,
      challenge.resourceMetadataUrl ? { resourceMetadataUrl: challenge.resourceMetadataUrl } : {},
      fetchFn,
    ).catch(() => null);
    // Metadata that speaks for another resource is refused: its tokens would be meant for another server.
    if (resourceMetadata && !checkResourceAllowed({ requestedResource: start.server_url, configuredResource: resourceMetadata.resource })) {
      throw new Error(`the server's protected-resource metadata is for ${resourceMetadata.resource}, not this server`);
    }
    const authorizationServer = resourceMetadata?.authorization_servers?.[0] ?? new URL(start.server_url).origin;
    // The scope asked for: the request's, else the server's challenge, else what its metadata supports, else none.
    const scope = start.scope ?? challenge.scope ?? (resourceMetadata?.scopes_supported?.join(" ") || null);
    const metadata = (await discoverAuthorizationServerMetadata(authorizationServer, { fetchFn })) ?? null;
    const documentUrl = metadata?.client_id_metadata_document_supported === true ? start.client_metadata_url : null;
    const client =
      start.client_id !== null
        ? { client_id: start.client_id, ...(start.client_secret !== null ? { client_secret: start.client_secret } : {}) }
        : documentUrl !== null
          ? { client_id: documentUrl }
          : await registerClient(authorizationServer, {
              ...(metadata ? { metadata } : {}),
              clientMetadata: { ...clientMetadataOf(start.redirect_uri), ...(scope !== null ? { scope } : {}) },
              fetchFn,
            });
    const nonce = encodeBase64Url(crypto.getRandomValues(new Uint8Array(24)));
    const resource = resourceMetadata?.resource ?? null;
    const { authorizationUrl, codeVerifier } = await startAuthorization(authorizationServer, {
      ...(metadata ? { metadata } : {}),
      clientInformation: client,
      redirectUrl: start.redirect_uri,
      state: encodeState(start.tenant, start.id, nonce),
      ...(scope !== null ? { scope } : {}),
      ...(resource !== null ? { resource } : {}),
    });
    const state: OAuthState = {
      server_url: start.server_url,
      authorization_server: authorizationServer,
      metadata: metadata as Record<string, unknown> | null,
      client: { client_id: client.client_id, ...(client.client_secret ? { client_secret: client.client_secret } : {}) },
      resource,
      redirect_uri: start.redirect_uri,
      scope,
      pending: { nonce, code_verifier: codeVerifier },
      tokens: null,
    };
    return { state, authorization_url: authorizationUrl.toString() };
  } catch (error) {
    throw new McpServerError(`The OAuth flow of ${start.server_url} could not start: ${describeFailure(error)}`, false);
  }
}

/**
 * The server's `WWW-Authenticate` challenge to an unauthenticated `initialize` (where its
 * protected-resource metadata is, which scope it wants), or nothing when it does not answer 401.
 */
async function challengeOf(serverUrl: string, fetchFn: typeof fetch): Promise<{ resourceMetadataUrl?: URL; scope?: string }> {
  const response = await fetchFn(serverUrl, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "agentry", version: BUILD_VERSION } },
    }),
  }).catch(() => null);
  if (!response) return {};
  await response.body?.cancel();
  if (response.status !== 401) return {};
  const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(response);
  return { ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}), ...(scope ? { scope } : {}) };
}

/**
 * A new authorization of a credential Agentry already knows the server and client of (after a
 * revoked grant): a new PKCE verifier and state nonce; the tokens stay until the callback replaces them.
 */
export async function reauthorize(
  state: OAuthState,
  tenant: string,
  id: string,
): Promise<{ state: OAuthState; authorization_url: string }> {
  const nonce = encodeBase64Url(crypto.getRandomValues(new Uint8Array(24)));
  const { authorizationUrl, codeVerifier } = await startAuthorization(state.authorization_server, {
    ...(state.metadata ? { metadata: state.metadata as AuthorizationServerMetadata } : {}),
    clientInformation: state.client,
    redirectUrl: state.redirect_uri,
    state: encodeState(tenant, id, nonce),
    ...(state.scope !== null ? { scope: state.scope } : {}),
    ...(state.resource !== null ? { resource: state.resource } : {}),
  });
  return { state: { ...state, pending: { nonce, code_verifier: codeVerifier } }, authorization_url: authorizationUrl.toString() };
}

const tokensOf = (tokens: OAuthTokens, previous: OAuthState["tokens"]): NonNullable<OAuthState["tokens"]> => {
  const refresh = tokens.refresh_token ?? previous?.refresh_token;
  return {
    access_token: tokens.access_token,
    ...(refresh ? { refresh_token: refresh } : {}),
    expires_at: tokens.expires_in === undefined ? null : Date.now() + tokens.expires_in * 1000,
  };
};

const common = (state: OAuthState, environment: string | undefined) => ({
  ...(state.metadata ? { metadata: state.metadata as AuthorizationServerMetadata } : {}),
  clientInformation: state.client,
  ...(state.resource !== null ? { resource: state.resource } : {}),
  fetchFn: oauthFetch(environment),
});

/** Exchanges the code of Agentry's callback for tokens (the pending verifier proves the flow is ours). */
export async function finishOAuth(state: OAuthState, code: string, environment: string | undefined): Promise<OAuthState> {
  if (!state.pending) throw new McpServerError("No authorization is in progress for this credential", false);
  const tokens = await exchangeAuthorization(state.authorization_server, {
    ...common(state, environment),
    authorizationCode: code,
    codeVerifier: state.pending.code_verifier,
    redirectUri: state.redirect_uri,
  });
  return { ...state, pending: null, tokens: tokensOf(tokens, null) };
}

/**
 * The stored access token when it has more than a minute left (or no expiry, or no refresh token
 * to get another with), else null: it must be refreshed (`refreshTokens`). A credential never
 * authorized throws McpServerError with `auth`.
 */
export function freshToken(state: OAuthState, label: string): string | null {
  const tokens = state.tokens;
  if (!tokens)
    throw new McpServerError(`MCP server ${label}: the OAuth credential is not authorized yet (open its authorization_url)`, true);
  const fresh = tokens.expires_at === null || tokens.expires_at - Date.now() > REFRESH_MARGIN_MS;
  return fresh || !tokens.refresh_token ? tokens.access_token : null;
}

/**
 * The state with new tokens from the refresh token (rotation kept: a new refresh token replaces
 * the old one). A refresh the server refuses (the grant was revoked or expired) throws
 * McpServerError with `auth`: the run ends, the user must authorize again.
 */
export async function refreshTokens(state: OAuthState, label: string, environment: string | undefined): Promise<OAuthState> {
  const refreshToken = state.tokens?.refresh_token;
  if (!refreshToken) throw new McpServerError(`MCP server ${label}: the OAuth credential holds no refresh token`, true);
  try {
    const refreshed = await refreshAuthorization(state.authorization_server, { ...common(state, environment), refreshToken });
    return { ...state, tokens: tokensOf(refreshed, state.tokens) };
  } catch (error) {
    throw new McpServerError(
      `MCP server ${label}: the OAuth grant was revoked or has expired (the refresh was refused: ${describeFailure(error)}); authorize the credential again`,
      true,
    );
  }
}

/**
 * The state asking for `scope` too (a server's 403 `insufficient_scope` named it): its scope becomes
 * the union of both, which the credential's next authorization asks for; null when it asks for all
 * of `scope` already (authorizing again would not help).
 */
export function widenScope(state: OAuthState, scope: string): OAuthState | null {
  const wider = unionScope(state.scope, scope);
  return wider === null ? null : { ...state, scope: wider };
}
