import { createRoute, z } from "@hono/zod-openapi";
import { forgetCredential } from "../credentials";
import { describeFailure } from "../mcp/errors";
import { clientMetadataOf, decodeState, finishOAuth } from "../mcp/oauth";
import type { OAuthState } from "../mcp/oauth-state";
import { changeOAuthState, readOAuthState } from "../mcp/oauth-store";
import { ApiError } from "./errors";
import { errorResponses } from "./responses";
import { newRouter } from "./router";

/** Where an MCP server's authorization server sends the user back (the redirect URI Agentry registers). */
export const OAUTH_CALLBACK_PATH = "/oauth/callback";

/** Agentry's OAuth client metadata document: its URL is Agentry's client id where a server fetches such documents (CIMD). */
export const CLIENT_METADATA_PATH = "/oauth/client-metadata.json";

/**
 * The URL of Agentry's client metadata document at `origin`, or null where an authorization
 * server could not fetch it (an http origin: CIMD client ids are https URLs).
 */
export const clientMetadataUrl = (origin: string) => (origin.startsWith("https://") ? `${origin}${CLIENT_METADATA_PATH}` : null);

const clientMetadataRoute = createRoute({
  operationId: "mcpOAuthClientMetadata",
  method: "get",
  path: CLIENT_METADATA_PATH,
  tags: ["credentials"],
  summary: "Agentry's OAuth client metadata document (the client id of mcp_oauth credentials at servers that support CIMD)",
  security: [],
  responses: {
    200: {
      description: "The client's metadata; `client_id` is this document's URL",
      content: {
        "application/json": {
          schema: z.object({
            client_id: z.string(),
            client_name: z.string(),
            redirect_uris: z.array(z.string()),
            grant_types: z.array(z.string()),
            response_types: z.array(z.string()),
            token_endpoint_auth_method: z.string(),
          }),
        },
      },
    },
  },
});

const callbackRoute = createRoute({
  operationId: "mcpOAuthCallback",
  method: "get",
  path: OAUTH_CALLBACK_PATH,
  tags: ["credentials"],
  summary: "The OAuth redirect of an mcp_oauth credential: exchanges the code (PKCE) and stores the tokens encrypted",
  security: [],
  request: {
    query: z.object({
      code: z.string().max(4096).optional(),
      state: z.string().max(4096),
      error: z.string().max(256).optional(),
      error_description: z.string().max(1024).optional(),
    }),
  },
  responses: {
    200: { description: "The credential is authorized (a short HTML page)", content: { "text/html": { schema: z.string() } } },
    400: { ...errorResponses[400], description: "Not a pending authorization of Agentry's, or the server refused the code" },
  },
});

const page = (text: string) =>
  `<!doctype html><meta charset="utf-8"><title>Agentry</title><p>${text.replace(/[<>&"]/g, (c) => `&#${c.charCodeAt(0)};`)}</p>`;

/**
 * `GET /oauth/callback` (no token: the user's browser arrives from the authorization server). The
 * `state` names the credential and carries a nonce only its encrypted state holds, so a forged or
 * replayed redirect finds nothing to complete (docs/mcp.md, OAuth).
 */
export const oauthCallbackRoutes = newRouter()
  .openapi(clientMetadataRoute, (c) => {
    const origin = new URL(c.req.url).origin;
    return c.json({ client_id: `${origin}${CLIENT_METADATA_PATH}`, ...clientMetadataOf(`${origin}${OAUTH_CALLBACK_PATH}`) }, 200);
  })
  .openapi(callbackRoute, async (c) => {
    const { code, state, error, error_description } = c.req.valid("query");
    const refused = (message: string) => {
      throw new ApiError("invalid_request", message);
    };
    const target = decodeState(state);
    if (!target) return refused("state is not one of Agentry's");
    const stored = await readOAuthState(c.env, target.tenant, target.id);
    if (stored?.state.pending?.nonce !== target.nonce) return refused("no pending authorization for this state");
    if (error || !code)
      return refused(`the authorization was not granted: ${error ?? "no code"}${error_description ? ` (${error_description})` : ""}`);
    let authorized: OAuthState;
    try {
      authorized = await finishOAuth(stored.state, code, c.env.ENVIRONMENT);
    } catch (failure) {
      return refused(`the authorization server refused the code: ${describeFailure(failure)}`);
    }
    // The new tokens go onto the state as it is now (a run may have widened its scope meanwhile), if this authorization is still the pending one.
    let applied = false;
    await changeOAuthState(c.env, target.tenant, target.id, (current) => {
      applied = current.pending?.nonce === target.nonce;
      return applied ? { ...current, pending: null, tokens: authorized.tokens } : null;
    });
    if (!applied) return refused("the credential was authorized again meanwhile: use its newest authorization_url");
    forgetCredential(target.tenant, target.id);
    return c.html(
      page(`Credential ${target.id} is authorized: Agentry's agents can now use ${authorized.server_url}. You can close this window.`),
      200,
    );
  });
