import { createRoute, z } from "@hono/zod-openapi";
import { forgetCredential } from "../credentials";
import { credentialsKey, decryptSecret, encryptSecret } from "../credentials/crypto";
import { MCP_OAUTH_CREDENTIAL } from "../credentials";
import { findCredentialRow, updateCredentialSecret } from "../db/credentials";
import { describeFailure } from "../mcp/errors";
import { decodeState, finishOAuth } from "../mcp/oauth";
import { oauthStateSchema } from "../mcp/oauth-state";
import { ApiError } from "./errors";
import { errorResponses } from "./responses";
import { newRouter } from "./router";

/** Where an MCP server's authorization server sends the user back (the redirect URI Agentry registers). */
export const OAUTH_CALLBACK_PATH = "/oauth/callback";

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
export const oauthCallbackRoutes = newRouter().openapi(callbackRoute, async (c) => {
  const { code, state, error, error_description } = c.req.valid("query");
  const refused = (message: string) => {
    throw new ApiError("invalid_request", message);
  };
  const target = decodeState(state);
  if (!target) return refused("state is not one of Agentry's");
  const row = await findCredentialRow(c.env.DB, target.tenant, target.id);
  if (!row || row.provider !== MCP_OAUTH_CREDENTIAL) return refused("no pending authorization for this state");
  const key = await credentialsKey(c.env.CREDENTIALS_KEY);
  const secret = await decryptSecret(key, target.tenant, target.id, row.ciphertext);
  const parsed = oauthStateSchema.safeParse(secret.oauth);
  if (!parsed.success || parsed.data.pending?.nonce !== target.nonce) return refused("no pending authorization for this state");
  if (error || !code)
    return refused(`the authorization was not granted: ${error ?? "no code"}${error_description ? ` (${error_description})` : ""}`);
  let authorized: typeof parsed.data;
  try {
    authorized = await finishOAuth(parsed.data, code, c.env.ENVIRONMENT);
  } catch (failure) {
    return refused(`the authorization server refused the code: ${describeFailure(failure)}`);
  }
  await updateCredentialSecret(
    c.env.DB,
    target.tenant,
    target.id,
    await encryptSecret(key, target.tenant, target.id, { ...secret, oauth: authorized }),
  );
  forgetCredential(target.tenant, target.id);
  return c.html(
    page(`Credential ${target.id} is authorized: Agentry's agents can now use ${authorized.server_url}. You can close this window.`),
    200,
  );
});
