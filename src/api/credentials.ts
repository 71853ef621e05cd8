import { createRoute, z } from "@hono/zod-openapi";
import { CLIENT_ID, nowIso } from "../core/ids";
import { beginOAuth, reauthorize } from "../mcp/oauth";
import { changeOAuthState } from "../mcp/oauth-store";
import { McpServerError } from "../mcp/errors";
import { clientMetadataUrl, OAUTH_CALLBACK_PATH } from "./oauth-callback";
import {
  CREDENTIAL_PROVIDERS,
  CREDENTIAL_TYPES,
  CredentialError,
  MCP_OAUTH_CREDENTIAL,
  MCP_CREDENTIAL,
  credentialInfoOf,
  forgetCredential,
} from "../credentials";
import type { CredentialInfo } from "../credentials";
import { credentialsKey, encryptSecret } from "../credentials/crypto";
import { extraHeadersSchema } from "../credentials/headers";
import { agentsUsingCredential, deleteUnusedCredential, findCredentialRow, insertCredential, listCredentials } from "../db/credentials";
import { checkOutboundUrl } from "../core/url-guard";
import { ApiError, invalidFields, notFound } from "./errors";
import { idempotentCreate, idempotencyKeyHeaders } from "./idempotency";
import { decodeCursor, listSchema, page, pageQuery } from "./pagination";
import { authErrors, bodyErrors, errorResponses } from "./responses";
import { bearerSecurity, newRouter } from "./router";

const visibleAscii = z.string().regex(/^[\x20-\x7e]{1,4096}$/, "must be 1 to 4096 visible ASCII characters (no line breaks)");

/**
 * One schema for both types (a provider credential has no `type`; docs/mcp.md, Credentials): the
 * fields each type needs or refuses are checked in `superRefine`, each problem naming its field.
 */
const credentialCreateSchema = z
  .strictObject({
    id: z.string().regex(CLIENT_ID, "must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$").openapi({ example: "my-openai" }),
    type: z.enum(CREDENTIAL_TYPES).default("provider").openapi({
      description: "`provider` (a model provider's key, the default) or `mcp` (a bearer token and/or headers for MCP servers)",
    }),
    provider: z.enum(CREDENTIAL_PROVIDERS).optional().openapi({ description: "Type provider: the provider the key is for (required)" }),
    api_key: visibleAscii.optional().openapi({ description: "Type provider: the key (required); encrypted at rest, never returned" }),
    token: visibleAscii
      .optional()
      .openapi({ description: "Type mcp: sent as `Authorization: Bearer <token>` to the MCP server; encrypted at rest, never returned" }),
    base_url: z
      .string()
      .min(1)
      .max(2048)
      .nullable()
      .default(null)
      .openapi({ example: "https://gateway.ai.cloudflare.com/v1/…/openai", description: "Type provider only" }),
    server_url: z.string().min(1).max(2048).optional().openapi({
      description: "Type mcp_oauth: the MCP server's URL (required); agents naming the credential must use the same server_url",
    }),
    client_id: z
      .string()
      .min(1)
      .max(512)
      .optional()
      .openapi({ description: "Type mcp_oauth: a pre-registered client; absent: Agentry registers one (dynamic client registration)" }),
    client_secret: visibleAscii
      .optional()
      .openapi({ description: "Type mcp_oauth: the pre-registered client's secret, if it has one; encrypted, never returned" }),
    scope: z.string().min(1).max(1024).optional().openapi({ description: "Type mcp_oauth: the scope to ask for" }),
    headers: extraHeadersSchema.default({}).openapi({
      description: "Extra headers for provider calls (e.g. cf-aig-authorization) or MCP requests; values encrypted, never returned",
    }),
  })
  .superRefine((body, ctx) => {
    const problem = (path: string, message: string) => ctx.addIssue({ code: "custom", path: [path], message });
    const oauthOnly = ["server_url", "client_id", "client_secret", "scope"] as const;
    if (body.type !== "mcp_oauth") {
      for (const field of oauthOnly) if (body[field] !== undefined) problem(field, "is for mcp_oauth credentials");
    }
    if (body.type === "provider") {
      if (body.provider === undefined) problem("provider", "is required for a provider credential");
      if (body.api_key === undefined) problem("api_key", "is required for a provider credential");
      if (body.token !== undefined) problem("token", "is for type mcp; a provider credential takes api_key");
      return;
    }
    if (body.type === "mcp_oauth") {
      if (body.server_url === undefined) problem("server_url", "is required for an mcp_oauth credential");
      if (body.client_secret !== undefined && body.client_id === undefined) problem("client_secret", "needs client_id");
      for (const field of ["provider", "api_key", "token"] as const) {
        if (body[field] !== undefined) problem(field, "is not taken by an mcp_oauth credential (its tokens come from the OAuth flow)");
      }
      if (body.base_url !== null) problem("base_url", "is for provider credentials; an mcp_oauth credential takes server_url");
      return;
    }
    if (body.provider !== undefined) problem("provider", "is for provider credentials; an mcp credential names no provider");
    if (body.api_key !== undefined) problem("api_key", "is for provider credentials; an mcp credential takes token");
    if (body.base_url !== null) problem("base_url", "is for provider credentials; the agent's mcp tool names the server_url");
    if (body.token === undefined && Object.keys(body.headers).length === 0) problem("token", "an mcp credential needs a token or headers");
  })
  .openapi("CredentialCreate");

const credentialSchema = z
  .object({
    id: z.string(),
    authorization_url: z.string().optional().openapi({
      description: "Type mcp_oauth, on creation only: where the user authorizes Agentry; the server redirects to Agentry's /oauth/callback",
    }),
    type: z.enum(CREDENTIAL_TYPES),
    provider: z.enum(CREDENTIAL_PROVIDERS).nullable().openapi({ description: "Null for an mcp credential" }),
    base_url: z.string().nullable(),
    header_names: z.array(z.string()),
    created_at: z.string(),
  })
  .openapi("Credential");

const credentialIdParams = z.object({ id: z.string().openapi({ param: { name: "id", in: "path" } }) });
const common = { tags: ["credentials"], security: bearerSecurity };
const json = <T extends z.ZodType>(schema: T) => ({ "application/json": { schema } });

const createCredentialRoute = createRoute({
  operationId: "createCredential",
  ...common,
  method: "post",
  path: "/credentials",
  summary: "Store a provider or MCP credential (its key, token and header values are encrypted, never returned)",
  request: { headers: idempotencyKeyHeaders, body: { required: true, content: json(credentialCreateSchema) } },
  responses: {
    201: { description: "The credential, without its key or header values", content: json(credentialSchema) },
    409: errorResponses[409],
    ...bodyErrors,
    500: { content: errorResponses[500].content, description: "The operator has not set a valid CREDENTIALS_KEY; nothing was stored" },
  },
});

const listCredentialsRoute = createRoute({
  operationId: "listCredentials",
  ...common,
  method: "get",
  path: "/credentials",
  summary: "List the tenant's credentials, newest first",
  request: { query: z.strictObject(pageQuery) },
  responses: {
    200: { description: "A page of credentials", content: json(listSchema(credentialSchema)) },
    400: errorResponses[400],
    ...authErrors,
  },
});

const getCredentialRoute = createRoute({
  operationId: "getCredential",
  ...common,
  method: "get",
  path: "/credentials/{id}",
  summary: "Read a credential (without its key or header values)",
  request: { params: credentialIdParams },
  responses: { 200: { description: "The credential", content: json(credentialSchema) }, 404: errorResponses[404], ...authErrors },
});

const deleteCredentialRoute = createRoute({
  operationId: "deleteCredential",
  ...common,
  method: "delete",
  path: "/credentials/{id}",
  summary: "Delete a credential no live agent names",
  request: { params: credentialIdParams },
  responses: {
    204: { description: "Deleted" },
    404: errorResponses[404],
    409: { ...errorResponses[409], description: "credential_in_use: agents name it (details.agent_ids)" },
    ...authErrors,
  },
});

const authorizeCredentialRoute = createRoute({
  operationId: "authorizeCredential",
  ...common,
  method: "post",
  path: "/credentials/{id}/authorize",
  summary:
    "Authorize an mcp_oauth credential again (after a revoked or expired grant, or a server asked for a larger scope): a new authorization_url with the scope the credential now asks for",
  request: { params: credentialIdParams },
  responses: {
    200: {
      description: "Where the user authorizes Agentry again",
      content: json(z.object({ id: z.string(), authorization_url: z.string() })),
    },
    ...bodyErrors,
    400: { ...errorResponses[400], description: "The credential is not an mcp_oauth credential" },
    404: errorResponses[404],
  },
});

/** The CREDENTIALS_KEY to encrypt with; without a valid one nothing can be stored (500 internal). */
async function keyOrFail(secret: string | undefined): Promise<CryptoKey> {
  try {
    return await credentialsKey(secret);
  } catch (error) {
    if (error instanceof CredentialError) throw new ApiError("internal", error.message);
    throw error;
  }
}

/**
 * Starts an mcp_oauth credential's authorization (src/mcp/oauth.ts); a server whose metadata,
 * registration or endpoints cannot be used is a 400 naming `server_url`, and nothing is stored.
 */
async function startOAuth(
  environment: string | undefined,
  origin: string,
  tenant: string,
  id: string,
  serverUrl: string,
  body: { client_id?: string | undefined; client_secret?: string | undefined; scope?: string | undefined },
) {
  try {
    return await beginOAuth({
      server_url: serverUrl,
      redirect_uri: `${origin}${OAUTH_CALLBACK_PATH}`,
      client_metadata_url: clientMetadataUrl(origin),
      client_id: body.client_id ?? null,
      client_secret: body.client_secret ?? null,
      scope: body.scope ?? null,
      tenant,
      id,
      environment,
    });
  } catch (error) {
    if (error instanceof McpServerError) throw invalidFields([{ path: "server_url", message: error.message }], error.message);
    throw error;
  }
}

/** The agents naming a credential were changed between the delete and the look-up: try again. */
const MAX_DELETE_ATTEMPTS = 3;

/** `/v1/credentials`: the tenant's own provider keys (docs/api.md, Agents, Provider credentials). */
export const credentialRoutes = newRouter()
  .openapi(createCredentialRoute, async (c) => {
    const body = c.req.valid("json");
    const { id, type, provider, api_key, token, base_url, headers } = body;
    const urlProblem = base_url === null ? null : checkOutboundUrl(base_url, c.env.ENVIRONMENT);
    if (urlProblem) throw invalidFields([{ path: "base_url", message: urlProblem }], `base_url ${urlProblem}`);
    const serverUrlProblem = body.server_url === undefined ? null : checkOutboundUrl(body.server_url, c.env.ENVIRONMENT);
    if (serverUrlProblem) throw invalidFields([{ path: "server_url", message: serverUrlProblem }], `server_url ${serverUrlProblem}`);
    const key = await keyOrFail(c.env.CREDENTIALS_KEY);
    const tenant = c.get("tenant");
    const created = await idempotentCreate<CredentialInfo & { authorization_url?: string }>(c, body, async () => {
      const oauth =
        type === "mcp_oauth" && body.server_url !== undefined
          ? await startOAuth(c.env.ENVIRONMENT, new URL(c.req.url).origin, tenant, id, body.server_url, body)
          : null;
      const row = {
        tenant,
        id,
        // An MCP credential's row says `mcp` / `mcp_oauth` where a provider credential names its provider.
        provider: type === "mcp" ? MCP_CREDENTIAL : type === "mcp_oauth" ? MCP_OAUTH_CREDENTIAL : (provider ?? ""),
        // An mcp_oauth credential keeps its server's URL here: agents naming it must use that server.
        baseUrl: type === "mcp_oauth" ? (body.server_url ?? null) : base_url,
        headerNames: JSON.stringify(Object.keys(headers)),
        ciphertext: await encryptSecret(key, tenant, id, {
          api_key: (type === "mcp" ? token : api_key) ?? "",
          headers,
          ...(oauth ? { oauth: oauth.state } : {}),
        }),
        createdAt: nowIso(),
      };
      if (!(await insertCredential(c.env.DB, row))) throw new ApiError("already_exists", `Credential ${id} already exists`);
      forgetCredential(tenant, id);
      return { body: { ...credentialInfoOf(row), ...(oauth ? { authorization_url: oauth.authorization_url } : {}) } };
    });
    return c.json(created, 201);
  })
  .openapi(authorizeCredentialRoute, async (c) => {
    const { id } = c.req.valid("param");
    const tenant = c.get("tenant");
    const row = await findCredentialRow(c.env.DB, tenant, id);
    if (!row) throw notFound("credential", id);
    if (row.provider !== MCP_OAUTH_CREDENTIAL)
      throw invalidFields([{ path: "id", message: `credential ${id} is not an mcp_oauth credential` }]);
    await keyOrFail(c.env.CREDENTIALS_KEY);
    // Stored over the state it was made from only (a run's refresh may write the credential meanwhile: src/mcp/oauth-store.ts).
    let authorizationUrl = "";
    const stored = await changeOAuthState(c.env, tenant, id, async (state) => {
      const again = await reauthorize(state, tenant, id);
      authorizationUrl = again.authorization_url;
      return again.state;
    });
    if (!stored) throw notFound("credential", id);
    forgetCredential(tenant, id);
    return c.json({ id, authorization_url: authorizationUrl }, 200);
  })
  .openapi(listCredentialsRoute, async (c) => {
    const { limit, cursor } = c.req.valid("query");
    const rows = await listCredentials(c.env.DB, c.get("tenant"), limit + 1, decodeCursor(cursor));
    return c.json(page(rows, limit, credentialInfoOf), 200);
  })
  .openapi(getCredentialRoute, async (c) => {
    const { id } = c.req.valid("param");
    const row = await findCredentialRow(c.env.DB, c.get("tenant"), id);
    if (!row) throw notFound("credential", id);
    return c.json(credentialInfoOf(row), 200);
  })
  .openapi(deleteCredentialRoute, async (c) => {
    const { id } = c.req.valid("param");
    const tenant = c.get("tenant");
    for (let attempt = 0; attempt < MAX_DELETE_ATTEMPTS; attempt++) {
      if (await deleteUnusedCredential(c.env.DB, tenant, id)) {
        forgetCredential(tenant, id);
        return c.body(null, 204);
      }
      if (!(await findCredentialRow(c.env.DB, tenant, id))) {
        forgetCredential(tenant, id);
        throw notFound("credential", id);
      }
      const agentIds = await agentsUsingCredential(c.env.DB, tenant, id);
      if (agentIds.length > 0) {
        const agents = `agent${agentIds.length > 1 ? "s" : ""} ${agentIds.join(", ")}`;
        throw new ApiError("credential_in_use", `Credential ${id} is named by ${agents}; change or delete them first`, {
          agent_ids: agentIds,
        });
      }
    }
    throw new ApiError("internal", `Credential ${id} kept changing; try again`);
  });
