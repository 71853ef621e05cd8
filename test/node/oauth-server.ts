import { createHash, randomUUID } from "node:crypto";

/** What the OAuth test server did, for the tests' assertions: token grants, in order. */
export type OAuthEvent = { grant: string; ok: boolean };

/**
 * A minimal OAuth 2.1 authorization server for one bucket's MCP server at `/oauth/<bucket>`
 * (test/node/mcp-server.ts): protected-resource and authorization-server metadata, dynamic client
 * registration, an authorization endpoint that approves at once (302 to the redirect URI with the
 * code and state), the token endpoint (authorization_code with PKCE S256, refresh_token with
 * rotation; access tokens live 30 s, so Agentry refreshes before each use), and
 * `POST /as/<bucket>/revoke` that revokes every token of the bucket. Tokens carry the scope the
 * authorization request asked for. A rotated refresh token used
 * again revokes the whole grant (every token of the bucket), as many authorization servers do. A
 * bucket named `slow-…` answers a refresh after `SLOW_REFRESH_MS` (a slow token endpoint: two
 * sessions refreshing at once overlap) with an access token that lives an hour.
 */
export const SLOW_REFRESH_MS = 1000;

export function oauthServer(base: () => string) {
  const codes = new Map<string, { challenge: string; client_id: string; redirect_uri: string; bucket: string; scope: string }>();
  const access = new Map<string, string>();
  const refresh = new Map<string, string>();
  /** The scope each access and refresh token was granted (what the authorization request asked for). */
  const scopes = new Map<string, string>();
  /** Refresh tokens already rotated, by bucket: presenting one again revokes the grant. */
  const rotated = new Map<string, string>();
  const events = new Map<string, OAuthEvent[]>();
  let readers: (() => void)[] = [];
  const note = (bucket: string, event: OAuthEvent) => {
    events.set(bucket, [...(events.get(bucket) ?? []), event]);
    const waiting = readers;
    readers = [];
    for (const wake of waiting) wake();
  };
  /** Grants revoked per bucket: a refresh answered after its grant was revoked is refused. */
  const revocations = new Map<string, number>();
  const revokeAll = (bucket: string) => {
    revocations.set(bucket, (revocations.get(bucket) ?? 0) + 1);
    for (const map of [access, refresh]) for (const [token, owner] of map) if (owner === bucket) map.delete(token);
  };
  const issue = (bucket: string, scope: string, expiresIn = 30) => {
    const tokens = {
      access_token: `at-${randomUUID()}`,
      refresh_token: `rt-${randomUUID()}`,
      token_type: "Bearer",
      expires_in: expiresIn,
    };
    access.set(tokens.access_token, bucket);
    refresh.set(tokens.refresh_token, bucket);
    scopes.set(tokens.access_token, scope);
    scopes.set(tokens.refresh_token, scope);
    return Response.json(tokens);
  };
  const issuer = (bucket: string) => `${base()}/as/${bucket}`;

  return {
    /** The bucket's token grants, once there are at least `count`. */
    async events(bucket: string, count = 0): Promise<OAuthEvent[]> {
      while ((events.get(bucket) ?? []).length < count) await new Promise<void>((resolve) => readers.push(resolve));
      return events.get(bucket) ?? [];
    },
    /** Whether a request to the bucket's MCP server carries a live access token. */
    authorized: (bucket: string, authorization: string | null) => access.get(authorization?.replace(/^Bearer /, "") ?? "") === bucket,
    /** The scope tokens the request's access token was granted. */
    scopeOf: (authorization: string | null) => (scopes.get(authorization?.replace(/^Bearer /, "") ?? "") ?? "").split(" "),
    /** A 401 asks for `mcp:read`. */
    unauthorized: (bucket: string) =>
      Response.json(
        { error: "invalid_token" },
        {
          status: 401,
          headers: {
            "www-authenticate": `Bearer resource_metadata="${base()}/.well-known/oauth-protected-resource/oauth/${bucket}", scope="mcp:read"`,
          },
        },
      ),
    /** A 403 whose challenge names the scope the request needs (a step-up). */
    insufficientScope: (bucket: string, scope: string) =>
      Response.json(
        { error: "insufficient_scope" },
        {
          status: 403,
          headers: {
            "www-authenticate": `Bearer error="insufficient_scope", scope="${scope}", resource_metadata="${base()}/.well-known/oauth-protected-resource/oauth/${bucket}"`,
          },
        },
      ),
    /** Answers the OAuth routes; null for any other path. */
    async handle(request: Request, path: string[]): Promise<Response | null> {
      const url = new URL(request.url);
      if (path[0] === ".well-known" && path[1] === "oauth-protected-resource" && path[2] === "oauth" && path[3]) {
        const bucket = path[3];
        return Response.json({ resource: `${base()}/oauth/${bucket}`, authorization_servers: [issuer(bucket)] });
      }
      if (path[0] === ".well-known" && path[1] === "oauth-authorization-server" && path[2] === "as" && path[3]) {
        const at = issuer(path[3]);
        return Response.json({
          issuer: at,
          authorization_endpoint: `${at}/authorize`,
          token_endpoint: `${at}/token`,
          registration_endpoint: `${at}/register`,
          response_types_supported: ["code"],
          grant_types_supported: ["authorization_code", "refresh_token"],
          code_challenge_methods_supported: ["S256"],
          token_endpoint_auth_methods_supported: ["none"],
          // A bucket named `cimd-…`: the server takes client metadata documents' URLs as client ids.
          ...(path[3].startsWith("cimd-") ? { client_id_metadata_document_supported: true } : {}),
        });
      }
      if (path[0] !== "as" || !path[1]) return null;
      const bucket = path[1];
      switch (path[2]) {
        case "register": {
          const metadata = (await request.json()) as Record<string, unknown>;
          return Response.json(
            { ...metadata, client_id: `client-${randomUUID()}`, client_id_issued_at: Math.floor(Date.now() / 1000) },
            { status: 201 },
          );
        }
        case "authorize": {
          const q = url.searchParams;
          if (q.get("code_challenge_method") !== "S256" || !q.get("code_challenge"))
            return new Response("PKCE S256 required", { status: 400 });
          const code = `code-${randomUUID()}`;
          codes.set(code, {
            challenge: q.get("code_challenge") ?? "",
            client_id: q.get("client_id") ?? "",
            redirect_uri: q.get("redirect_uri") ?? "",
            bucket,
            scope: q.get("scope") ?? "",
          });
          const back = new URL(q.get("redirect_uri") ?? "");
          back.searchParams.set("code", code);
          back.searchParams.set("state", q.get("state") ?? "");
          return new Response(null, { status: 302, headers: { location: back.toString() } });
        }
        case "token": {
          const form = new URLSearchParams(await request.text());
          const grant = form.get("grant_type") ?? "";
          if (grant === "authorization_code") {
            const entry = codes.get(form.get("code") ?? "");
            codes.delete(form.get("code") ?? "");
            const challenge = createHash("sha256")
              .update(form.get("code_verifier") ?? "")
              .digest("base64url");
            const ok = entry !== undefined && entry.challenge === challenge && entry.redirect_uri === form.get("redirect_uri");
            note(bucket, { grant, ok });
            return ok ? issue(bucket, entry.scope) : Response.json({ error: "invalid_grant" }, { status: 400 });
          }
          if (grant === "refresh_token") {
            const token = form.get("refresh_token") ?? "";
            const ok = refresh.get(token) === bucket;
            note(bucket, { grant, ok });
            if (rotated.get(token) === bucket) revokeAll(bucket);
            if (!ok) return Response.json({ error: "invalid_grant", error_description: "refresh token revoked" }, { status: 400 });
            refresh.delete(token);
            rotated.set(token, bucket);
            const scope = scopes.get(token) ?? "";
            if (!bucket.startsWith("slow-")) return issue(bucket, scope);
            const revoked = revocations.get(bucket);
            await new Promise((resolve) => setTimeout(resolve, SLOW_REFRESH_MS));
            if (revocations.get(bucket) !== revoked)
              return Response.json({ error: "invalid_grant", error_description: "grant revoked" }, { status: 400 });
            return issue(bucket, scope, 3600);
          }
          return Response.json({ error: "unsupported_grant_type" }, { status: 400 });
        }
        case "revoke": {
          revokeAll(bucket);
          return new Response(null, { status: 204 });
        }
        default:
          return new Response("not found", { status: 404 });
      }
    },
  };
}
