/**
 * The client command of the MCP conformance suite (client mode): Agentry's own MCP client code
 * (src/mcp: connect, list, call, the OAuth flow) against the scenario's server, whose URL is the
 * last argument. Bundled by scripts/mcp-conformance.mjs and run with Node 22.
 */
import { Buffer } from "node:buffer";
import process from "node:process";
import type { Agent, McpTool } from "../../src/agents";
import { callMcpTool, listMcpTools, McpConnections, type McpEnv } from "../../src/mcp";
import { beginOAuth, finishOAuth, reauthorize, widenScope } from "../../src/mcp/oauth";
import type { OAuthState } from "../../src/mcp/oauth-state";

// workerd has the TC39 base64 methods on Uint8Array (src/core/base64.ts); Node 22 does not yet.
type Base64Options = { alphabet?: "base64" | "base64url"; omitPadding?: boolean };
const proto = Uint8Array.prototype as unknown as { toBase64?: (options?: Base64Options) => string };
proto.toBase64 ??= function (this: Uint8Array, options?: Base64Options) {
  const text = Buffer.from(this).toString(options?.alphabet === "base64url" ? "base64url" : "base64");
  return options?.omitPadding ? text.replace(/=+$/, "") : text;
};
const statics = Uint8Array as unknown as { fromBase64?: (text: string, options?: Base64Options) => Uint8Array };
statics.fromBase64 ??= (text, options) => new Uint8Array(Buffer.from(text, options?.alphabet === "base64url" ? "base64url" : "base64"));

const serverUrl = process.argv[process.argv.length - 1] ?? "";
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}") as { client_id?: string; client_secret?: string };

const REDIRECT_URI = "http://localhost:9/oauth/callback";
/** The client metadata document URL (CIMD) the suite's authorization servers expect. */
const CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json";

/** The "user" follows the authorization URL; the authorization server redirects with the code. */
async function approve(state: OAuthState, authorizationUrl: string): Promise<OAuthState> {
  const approved = await fetch(authorizationUrl, { redirect: "manual" });
  const location = approved.headers.get("location");
  if (!location) throw new Error(`the authorization endpoint answered ${approved.status} without a redirect`);
  const code = new URL(location).searchParams.get("code");
  if (!code) throw new Error("the redirect carries no code");
  const authorized = await finishOAuth(state, code, "development");
  if (!authorized.tokens) throw new Error("no tokens");
  return authorized;
}

/** The OAuth flow as an mcp_oauth credential runs it. */
async function authorize(): Promise<OAuthState> {
  const { state, authorization_url } = await beginOAuth({
    server_url: serverUrl,
    redirect_uri: REDIRECT_URI,
    // Where Agentry's deployment serves its client metadata document; the suite names the URL its
    // authorization servers expect (auth/basic-cimd) and fetches nothing.
    client_metadata_url: CLIENT_METADATA_URL,
    client_id: context.client_id ?? null,
    client_secret: context.client_secret ?? null,
    scope: null,
    tenant: "conformance",
    id: "probe",
    environment: "development",
  });
  return approve(state, authorization_url);
}

const server: McpTool = {
  type: "mcp",
  server_label: "conformance",
  server_url: serverUrl,
  credential: null,
  allowed_tools: null,
  requires_approval: false,
};
const agent = { id: "conformance", version: 1, provider: "mock", tools: [server] } as unknown as Agent;
const signal = new AbortController().signal;
// The server names no credential (the token is the probe's own): neither D1 nor the credentials' objects are used.
const env = { ENVIRONMENT: "development" } as unknown as McpEnv;

/** Lists the server's tools and calls each (`add_numbers` with 2 and 3); throws on a run-ending error. */
async function listAndCall(token: string | null, onScopeNeeded: (scope: string) => void): Promise<void> {
  const connections = new McpConnections({
    env,
    tenant: "conformance",
    servers: [server],
    signal,
    ...(token ? { bearer: token } : {}),
    onScopeNeeded: (_label, scope) => onScopeNeeded(scope),
  });
  try {
    const tools = await listMcpTools(agent, "conformance", connections, signal);
    console.log(`listed ${tools.map((t) => t.name).join(", ") || "no tools"}`);
    for (const tool of tools) {
      const args = tool.tool === "add_numbers" ? { a: 2, b: 3 } : {};
      const outcome = await callMcpTool(tool, args, {
        connections,
        bucket: { put: async () => null } as unknown as R2Bucket,
        scope: { tenant: "conformance", session_id: "probe" },
        run_id: "probe",
        signal,
      });
      if (outcome.fatal) throw new Error(outcome.fatal);
      console.log(`${tool.name}: ${outcome.is_error ? "error" : "ok"}: ${outcome.output.slice(0, 200)}`);
    }
  } finally {
    await connections.close();
  }
}

/**
 * What a user of Agentry does: authorize the credential, run; when the run ends because the server
 * needs a larger scope (403 insufficient_scope), authorize the credential again (the same code as
 * `POST /v1/credentials/{id}/authorize`, with the scope the run recorded) and run again, once.
 */
async function main(): Promise<void> {
  let state = scenario.startsWith("auth/") ? await authorize() : null;
  let needed: string | null = null;
  try {
    await listAndCall(state?.tokens?.access_token ?? null, (scope) => {
      needed = scope;
    });
  } catch (error) {
    const wider = state && needed !== null ? widenScope(state, needed) : null;
    if (!wider) throw error;
    console.log(`${error instanceof Error ? error.message : String(error)}: authorizing again`);
    const again = await reauthorize(wider, "conformance", "probe");
    state = await approve(again.state, again.authorization_url);
    await listAndCall(state.tokens?.access_token ?? null, () => {});
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  },
);
