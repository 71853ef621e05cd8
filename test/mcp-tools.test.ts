import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { McpTool } from "../client/index.ts";
import { testClient } from "./support/client";
import { storedEvents } from "./support/events";
import { api, apiRequest, createAgent, createTenantToken, uniqueTenant } from "./support/http";
import { postRun, runTurn, transcriptOf, type Run } from "./support/runs";
import { callsReceived, openGate } from "./support/tool-server";
import type { Received } from "./node/mcp-server";

type ErrorBody = { error: { type: string; details: { fields?: { path: string; message: string }[] } } };

/** The bearer token the MCP test server's `/bearer/…` routes take (test/node/mcp-server.ts). */
const MCP_TEST_TOKEN = "mcp-test-token-0123456789";

/** A fresh bucket of the MCP test server (test/node/mcp-server.ts) and its URL. */
function mcpServer(kind: "mcp" | "bearer" | "sse" | "oauth" | "resumable" = "mcp", prefix = "") {
  const bucket = `${prefix}${crypto.randomUUID()}`;
  return { bucket, url: `${env.MCP_SERVER_URL}/${kind}/${bucket}` };
}

/** The requests the bucket received, once there are at least `count`. */
async function received(bucket: string, count = 0): Promise<Received[]> {
  const response = await fetch(`${env.MCP_SERVER_URL}/received/${bucket}?count=${count}`);
  return response.json<Received[]>();
}

const everything = (url: string, fields: Record<string, unknown> = {}) => ({
  type: "mcp",
  server_label: "everything",
  server_url: url,
  ...fields,
});
const stubOf = (tenant: string, sessionId: string) => env.SESSION.get(env.SESSION.idFromName(`${tenant}/${sessionId}`));

/** The tool names a run offered from its MCP servers (kept with the run in its session's object). */
async function listedNames(run: Run, tenant = "default"): Promise<string[]> {
  return runInDurableObject(stubOf(tenant, run.session_id), (_instance, state) => {
    const row = state.storage.sql.exec<{ tools: string }>("SELECT tools FROM run_mcp_tools WHERE run_id = ?", run.id).one();
    return (JSON.parse(row.tools) as { name: string }[]).map((t) => t.name);
  });
}

const toolResults = async (sessionId: string, token?: string) =>
  (await transcriptOf(sessionId, token)).flatMap((m) => m.content).filter((b) => b.type === "tool_result") as {
    output: string;
    is_error: boolean;
  }[];

describe("MCP tools", () => {
  it("lists the server's tools when the run starts and calls one with tools/call", async () => {
    const { bucket, url } = mcpServer();
    const agent = await createAgent({ tools: [everything(url)] });
    const run = await runTurn(agent.id, { input: '[[tool everything__echo {"message":"hello mcp"}]] go' });
    expect(run.status).toBe("completed");
    expect(run.output).toBe("You said: go\neverything__echo returned: Echo: hello mcp");
    const methods = (await received(bucket)).map((r) => r.method);
    // One session for the whole run: the list and the call share it.
    expect(methods).toEqual(["initialize", "notifications/initialized", "tools/list", "tools/call"]);
    expect(await listedNames(run)).toEqual(expect.arrayContaining(["everything__echo", "everything__get-sum", "everything__fail"]));
  });

  it("maps results: images stored as media, structuredContent as JSON, isError as a tool error", async () => {
    const { url } = mcpServer();
    const agent = await createAgent({ tools: [everything(url)] });
    const run = await runTurn(agent.id, {
      input:
        '[[tool everything__get-tiny-image {}]] [[tool everything__get-structured-content {"location":"Chicago"}]] [[tool everything__fail {}]]',
    });
    expect(run.status).toBe("completed");
    const [image, structured, failed] = await toolResults(run.session_id);
    const mediaId = /media_id (med_[A-Za-z0-9]+)/.exec(image!.output)?.[1];
    expect(image!.output).toMatch(/^Here's the image you requested:\n\[image image\/png, media_id med_\w+, \d+ bytes\]\nThe image above/);
    const stored = await env.MEDIA.get(`default/${run.session_id}/${mediaId}`);
    expect(stored?.httpMetadata?.contentType).toBe("image/png");
    expect(new Uint8Array(await stored!.arrayBuffer()).slice(1, 4)).toEqual(new TextEncoder().encode("PNG"));
    expect(structured).toEqual(expect.objectContaining({ is_error: false }));
    expect(JSON.parse(structured!.output)).toEqual({
      temperature: expect.any(Number),
      conditions: expect.any(String),
      humidity: expect.any(Number),
    });
    expect(failed).toEqual(expect.objectContaining({ output: "the tool failed on purpose", is_error: true }));
    const errors = (await storedEvents(agent.id, run.id)).filter((e) => e.type === "tool_call_error");
    expect(errors.map((e) => e.data)).toEqual([expect.objectContaining({ name: "everything__fail", error: "the tool failed on purpose" })]);
  });

  it("waits for a slow tool that reports progress", async () => {
    const { url } = mcpServer();
    const agent = await createAgent({ tools: [everything(url)] });
    const run = await runTurn(agent.id, { input: '[[tool everything__trigger-long-running-operation {"duration":0.3,"steps":3}]]' });
    expect(run.output).toBe(
      "everything__trigger-long-running-operation returned: Long running operation completed. Duration: 0.3 seconds, Steps: 3.",
    );
  });

  it("starts a new MCP session when the server restarted and forgot the run's", async () => {
    const { bucket, url } = mcpServer();
    const agent = await createAgent({ tools: [everything(url)] });
    const run = await runTurn(agent.id, { input: '[[tool everything__restart {}]] [[tool everything__echo {"message":"after"}]]' });
    expect(run.output).toBe("everything__restart returned: restarting\neverything__echo returned: Echo: after");
    const requests = (await received(bucket)).map((r) => `${r.method} ${r.status}`);
    expect(requests).toEqual([
      "initialize 200",
      "notifications/initialized 202",
      "tools/list 200",
      "tools/call 200",
      "tools/call 404",
      "initialize 200",
      "notifications/initialized 202",
      "tools/call 200",
    ]);
  });

  it("gets the answer of a call whose stream the server closed by resuming it (GET with Last-Event-ID)", async () => {
    const { bucket, url } = mcpServer("resumable");
    const agent = await createAgent({ tools: [everything(url)] });
    const run = await runTurn(agent.id, { input: "[[tool everything__break-stream {}]]" });
    expect(run.output).toBe("everything__break-stream returned: answered after the stream was closed");
    const requests = await received(bucket);
    expect(requests.filter((r) => r.method === "tools/call")).toHaveLength(1);
    // One GET reached the server: the resumption, after the last event the closed stream carried; the standalone stream was never opened.
    expect(requests.filter((r) => r.method === "GET")).toEqual([
      expect.objectContaining({ status: 200, last_event_id: expect.stringMatching(/^.+_\d{6}$/) }),
    ]);
  });

  it("offers only allowed_tools, and names a long tool within 64 characters", async () => {
    const { url } = mcpServer();
    const long = "a.tool.whose.name.is.far.too.long.for.any.provider.to.accept.as.it.is.v2";
    const agent = await createAgent({ tools: [everything(url, { allowed_tools: ["echo", long] })] });
    const run = await runTurn(agent.id, { input: '[[tool everything__get-sum {"a":1,"b":2}]]' });
    const names = await listedNames(run);
    expect(names[0]).toBe("everything__echo");
    // Dots become `_`, and the name is cut to 57 characters plus `_` and 6 hex digits of a hash.
    expect(names[1]).toMatch(/^everything__a_tool_whose_name_is_far_too_long_for_any_pro_[0-9a-f]{6}$/);
    expect(names[1]).toHaveLength(64);
    expect(names).toHaveLength(2);
    expect(await toolResults(run.session_id)).toEqual([
      expect.objectContaining({ output: "Unknown tool: everything__get-sum", is_error: true }),
    ]);
    const called = await runTurn(agent.id, { input: `[[tool ${names[1]} {}]]` });
    expect(called.output).toBe(`${names[1]} returned: long name called`);
  });

  it("falls back to the older HTTP+SSE transport for a server that only speaks it", async () => {
    const { bucket, url } = mcpServer("sse");
    const agent = await createAgent({ tools: [everything(url)] });
    const run = await runTurn(agent.id, { input: '[[tool everything__get-sum {"a":2,"b":3}]]' });
    expect(run.output).toBe("everything__get-sum returned: The sum of 2 and 3 is 5.");
    const methods = (await received(bucket)).map((r) => `${r.method} ${r.status}`);
    expect(methods[0]).toBe("initialize 405");
    expect(methods.slice(1)).toEqual(["initialize 202", "notifications/initialized 202", "tools/list 202", "tools/call 202"]);
  });
});

describe("MCP credentials", () => {
  it("sends an mcp credential's bearer token on every request and never shows it", async () => {
    const tenant = uniqueTenant("mcp");
    const token = await createTenantToken(tenant);
    const created = await api("/v1/credentials", { body: { id: "everything-token", type: "mcp", token: MCP_TEST_TOKEN } }, token);
    expect(created.status).toBe(201);
    const shown = await created.json<Record<string, unknown>>();
    expect(shown).toEqual(expect.objectContaining({ id: "everything-token", type: "mcp", provider: null, header_names: [] }));
    const { bucket, url } = mcpServer("bearer");
    const agent = await createAgent({ tools: [everything(url, { credential: "everything-token" })] }, token);
    const run = await runTurn(agent.id, { input: '[[tool everything__echo {"message":"authorised"}]]' }, token);
    expect(run.output).toBe("everything__echo returned: Echo: authorised");
    const requests = await received(bucket);
    expect(requests.length).toBeGreaterThanOrEqual(4);
    expect(new Set(requests.map((r) => r.authorization))).toEqual(new Set([`Bearer ${MCP_TEST_TOKEN}`]));
    const seen = JSON.stringify([
      shown,
      run,
      await storedEvents(agent.id, run.id, undefined, token),
      await transcriptOf(run.session_id, token),
      await (await api("/v1/credentials", {}, token)).json(),
      await (await api(`/v1/agents/${agent.id}`, {}, token)).json(),
    ]);
    expect(seen).not.toContain(MCP_TEST_TOKEN);
  });

  it("ends the run with a tool_error naming the server when it refuses the credential", async () => {
    const { url } = mcpServer("bearer");
    const agent = await createAgent({ tools: [everything(url)] });
    const run = await runTurn(agent.id, { input: '[[tool everything__echo {"message":"x"}]]' });
    expect(run.status).toBe("error");
    expect(run.error).toEqual({
      type: "tool_error",
      message: "MCP server everything refused Agentry's credentials (HTTP 401)",
      retryable: false,
    });
    expect(run.metrics.model_calls).toBe(0);
  });

  it("refuses bad mcp credentials and bad mcp tool definitions with 400 naming the field", async () => {
    const tenant = uniqueTenant("mcp-bad");
    const token = await createTenantToken(tenant);
    const fieldsOf = async (response: Response) => {
      expect(response.status).toBe(400);
      return ((await response.json<ErrorBody>()).error.details.fields ?? []).map((f) => f.path);
    };
    expect(await fieldsOf(await api("/v1/credentials", { body: { id: "c1", type: "mcp" } }, token))).toEqual(["token"]);
    expect(
      await fieldsOf(await api("/v1/credentials", { body: { id: "c1", type: "mcp", token: "t", provider: "openai" } }, token)),
    ).toEqual(["provider"]);
    expect(await fieldsOf(await api("/v1/credentials", { body: { id: "c1", provider: "openai" } }, token))).toEqual(["api_key"]);
    await api("/v1/credentials", { body: { id: "openai-key", provider: "openai", api_key: "sk-x" } }, token);
    const { url } = mcpServer();
    const cases: [Record<string, unknown>[], string][] = [
      [[everything(url, { server_label: "has space" })], "tools.0.server_label"],
      [[everything(url, { server_label: "x".repeat(33) })], "tools.0.server_label"],
      [[everything("not a url")], "tools.0.server_url"],
      [[everything(url, { credential: "missing" })], "tools.0.credential"],
      [[everything(url, { credential: "openai-key" })], "tools.0.credential"],
      [[everything(url, { allowed_tools: [] })], "tools.0.allowed_tools"],
      [[everything(url, { name: "echo" })], "tools.0"],
      [[everything(url), everything(url)], "tools.1.server_label"],
      [[everything(url), { type: "client", name: "everything__echo" }], "tools.1.name"],
    ];
    for (const [tools, path] of cases) {
      const response = await api("/v1/agents", { body: { provider: "mock", model: "m", tools } }, token);
      const paths = await fieldsOf(response);
      expect(
        paths.some((p) => p.startsWith(path)),
        `${JSON.stringify(tools)} → ${paths.join(", ")}`,
      ).toBe(true);
    }
    expect((await api("/v1/agents", {}, token).then((r) => r.json<{ data: unknown[] }>())).data).toEqual([]);
  });

  it("keeps a credential named by an agent's MCP tool from being deleted", async () => {
    const token = await createTenantToken(uniqueTenant("mcp-del"));
    await api("/v1/credentials", { body: { id: "used", type: "mcp", headers: { "x-api-key-2": "v" } } }, token);
    const agent = await createAgent({ tools: [everything(mcpServer().url, { credential: "used" })] }, token);
    const refused = await api("/v1/credentials/used", { method: "DELETE" }, token);
    expect(refused.status).toBe(409);
    expect((await refused.json<{ error: { details: unknown } }>()).error.details).toEqual({ agent_ids: [agent.id] });
  });
});

describe("MCP calls once only", () => {
  it("answers a call sent before a crash, whose outcome was not recorded, with a tool error instead of sending it again", async () => {
    const { bucket, url } = mcpServer();
    const agent = await createAgent({ tools: [everything(url)] });
    const started = await (await postRun(agent.id, { input: "[[tool everything__gate {}]] go", background: true })).json<{
      run_id: string;
    }>();
    // The call reached the server, which holds it at the tool server's gate; then the object dies.
    await callsReceived(bucket, 1);
    await abortAllDurableObjects();
    await openGate(bucket);
    const run = await (await api(`/v1/agents/${agent.id}/runs/${started.run_id}?wait=20`)).json<Run>();
    expect(run.status).toBe("completed");
    expect(run.output).toMatch(/^You said: go\neverything__gate returned: Outcome unknown: everything__gate was sent to its MCP server/);
    expect((await received(bucket)).filter((r) => r.method === "tools/call")).toHaveLength(1);
    expect(await callsReceived(bucket)).toHaveLength(1);
  });
});

describe("MCP with the typed client", () => {
  it("stores an mcp credential, attaches a server to an agent and runs one of its tools", async () => {
    const client = testClient({ token: await createTenantToken(uniqueTenant("mcp-client")) });
    const credential = await client.createMcpCredential("everything", { token: MCP_TEST_TOKEN });
    expect(credential).toEqual(expect.objectContaining({ id: "everything", type: "mcp", provider: null }));
    const server: McpTool = { type: "mcp", server_label: "everything", server_url: mcpServer("bearer").url, credential: "everything" };
    const agent = await client.createAgent({ provider: "mock", model: "mock-1", tools: [server] });
    const run = await client.run(agent.id, { input: '[[tool everything__get-sum {"a":20,"b":22}]]' });
    expect(run.output).toBe("everything__get-sum returned: The sum of 20 and 22 is 42.");
  });
});

describe("MCP tools that require approval", () => {
  it("pauses before each call, calls an approved one once and never a denied one", async () => {
    const { bucket, url } = mcpServer();
    const agent = await createAgent({ tools: [everything(url, { requires_approval: true })] });
    const paused = await runTurn(agent.id, {
      input: '[[tool everything__echo {"message":"yes"}]] [[tool everything__get-sum {"a":1,"b":1}]]',
    });
    expect(paused.status).toBe("paused");
    const [first] = paused.required_actions;
    expect(first).toEqual({ type: "approval", tool_call_id: expect.any(String), name: "everything__echo", arguments: { message: "yes" } });
    const continueWith = (runId: string, approvals: unknown[]) =>
      api(`/v1/agents/${agent.id}/runs/${runId}/continue`, { body: { approvals } }).then((r) => r.json<Run>());
    const second = await continueWith(paused.id, [{ tool_call_id: first!.tool_call_id, approve: true }]);
    expect(second.status).toBe("paused");
    expect(second.required_actions.map((a) => a.name)).toEqual(["everything__get-sum"]);
    const done = await continueWith(paused.id, [
      { tool_call_id: second.required_actions[0]!.tool_call_id, approve: false, reason: "not now" },
    ]);
    expect(done.status).toBe("completed");
    expect(done.output).toBe("everything__echo returned: Echo: yes\neverything__get-sum returned: denied: not now");
    // The list at the start, then one call: the approved one.
    expect((await received(bucket)).filter((r) => r.method === "tools/call").map((r) => r.tool)).toEqual(["echo"]);
  });

  it("refuses an agent whose MCP server requires approval on /v1/responses, naming model", async () => {
    const agent = await createAgent({ tools: [everything(mcpServer().url, { requires_approval: true })] });
    const response = await api("/v1/responses", { body: { model: agent.id, input: "hi" } });
    expect(response.status).toBe(400);
    const { error } = await response.json<{ error: { param: string; message: string } }>();
    expect(error).toEqual(
      expect.objectContaining({
        param: "model",
        message: `model: the agent's MCP server "everything" requires approval, which /v1/responses cannot answer: use POST /v1/agents/{agent_id}/runs`,
      }),
    );
  });
});

describe("MCP OAuth", () => {
  /** Creates an mcp_oauth credential, follows its authorization_url like a browser, and lands on Agentry's callback. */
  async function authorizedCredential(token: string, serverUrl: string, id = "oauth-server") {
    const created = await api("/v1/credentials", { body: { id, type: "mcp_oauth", server_url: serverUrl } }, token);
    expect(created.status).toBe(201);
    const credential = await created.json<{ type: string; authorization_url: string; base_url: string }>();
    expect(credential).toEqual(expect.objectContaining({ type: "mcp_oauth", base_url: serverUrl }));
    // The authorization server approves at once and redirects to Agentry's callback with the code and state.
    const approved = await fetch(credential.authorization_url, { redirect: "manual" });
    expect(approved.status).toBe(302);
    const callback = new URL(approved.headers.get("location") ?? "");
    expect(callback.origin + callback.pathname).toBe("http://agentry.test/oauth/callback");
    const landed = await api(`${callback.pathname}${callback.search}`, {}, null);
    expect(landed.status).toBe(200);
    expect(await landed.text()).toContain(`Credential ${id} is authorized`);
    return { credential, callback };
  }

  /** The OAuth server's token grants for the bucket, once there are at least `count`. */
  const oauthEvents = async (bucket: string, count = 0) =>
    (await fetch(`${env.MCP_SERVER_URL}/oauth-events/${bucket}?count=${count}`)).json<{ grant: string; ok: boolean }[]>();

  it("authorizes with PKCE through Agentry's callback, refreshes before expiry, and ends runs clearly once the grant is revoked", async () => {
    const token = await createTenantToken(uniqueTenant("oauth"));
    const { bucket, url } = mcpServer("oauth");
    const { callback } = await authorizedCredential(token, url);
    const agent = await createAgent({ tools: [everything(url, { credential: "oauth-server" })] }, token);
    const run = await runTurn(agent.id, { input: '[[tool everything__echo {"message":"via oauth"}]]' }, token);
    expect(run.output).toBe("everything__echo returned: Echo: via oauth");
    // The access token lives 30 s: it was refreshed (less than a minute left) before the run's requests.
    expect(await oauthEvents(bucket)).toEqual([
      { grant: "authorization_code", ok: true },
      { grant: "refresh_token", ok: true },
    ]);
    const [challenge, ...requests] = await received(bucket);
    // Creating the credential asked the server once, unauthenticated, for its WWW-Authenticate challenge.
    expect(challenge).toEqual(expect.objectContaining({ method: "initialize", authorization: null, status: 401 }));
    expect(requests.length).toBeGreaterThanOrEqual(4);
    expect(requests.every((r) => r.authorization?.startsWith("Bearer at-") && r.status !== 401)).toBe(true);
    // The callback cannot be replayed: the pending authorization is gone.
    expect((await api(`${callback.pathname}${callback.search}`, {}, null)).status).toBe(400);

    await fetch(`${env.MCP_SERVER_URL}/as/${bucket}/revoke`, { method: "POST" });
    const revoked = await runTurn(agent.id, { input: '[[tool everything__echo {"message":"again"}]]' }, token);
    expect(revoked.status).toBe("error");
    expect(revoked.error?.type).toBe("tool_error");
    expect(revoked.error?.message).toMatch(
      /^MCP server everything: the OAuth grant was revoked or has expired .*authorize the credential again$/,
    );
    // Authorized again: a new authorization URL, the same callback, and runs work again.
    const again = await api("/v1/credentials/oauth-server/authorize", { method: "POST" }, token);
    expect(again.status).toBe(200);
    const { authorization_url } = await again.json<{ authorization_url: string }>();
    const redirect = new URL((await fetch(authorization_url, { redirect: "manual" })).headers.get("location") ?? "");
    expect((await api(`${redirect.pathname}${redirect.search}`, {}, null)).status).toBe(200);
    const back = await runTurn(agent.id, { input: '[[tool everything__echo {"message":"back"}]]' }, token);
    expect(back.output).toBe("everything__echo returned: Echo: back");

    const seen = JSON.stringify([
      run,
      revoked,
      back,
      await transcriptOf(run.session_id, token),
      await (await api("/v1/credentials", {}, token)).json(),
    ]);
    expect(seen).not.toMatch(/at-[0-9a-f-]{36}|rt-[0-9a-f-]{36}/);
  });

  it("refreshes a credential once when two sessions need a new token at the same moment", async () => {
    const token = await createTenantToken(uniqueTenant("oauth-race"));
    // A slow token endpoint that rotates refresh tokens and revokes the grant when a rotated one is used again.
    const { bucket, url } = mcpServer("oauth", "slow-");
    await authorizedCredential(token, url);
    const agent = await createAgent({ tools: [everything(url, { credential: "oauth-server" })] }, token);
    const start = async (message: string) =>
      (await postRun(agent.id, { input: `[[tool everything__echo {"message":"${message}"}]]`, background: true }, token)).json<{
        run_id: string;
      }>();
    // The stored access token has 30 s left: the first session refreshes it; while the token endpoint
    // holds that refresh, a second session needs a token too.
    const first = await start("one");
    await oauthEvents(bucket, 2);
    const second = await start("two");
    const finished = async (run: { run_id: string }) =>
      (await api(`/v1/agents/${agent.id}/runs/${run.run_id}?wait=20`, {}, token)).json<Run>();
    const runs = await Promise.all([finished(first), finished(second)]);
    expect(runs.map((r) => [r.status, r.output])).toEqual([
      ["completed", "everything__echo returned: Echo: one"],
      ["completed", "everything__echo returned: Echo: two"],
    ]);
    expect(await oauthEvents(bucket)).toEqual([
      { grant: "authorization_code", ok: true },
      { grant: "refresh_token", ok: true },
    ]);
  });

  it("names itself by its client metadata document's URL where the server takes one (CIMD), over https; registers where it does not", async () => {
    const token = await createTenantToken(uniqueTenant("oauth-cimd"));
    // Agentry served over https (as deployed): its client metadata document can be fetched by an authorization server.
    const overHttps = (path: string, init: Parameters<typeof apiRequest>[1] = {}, key: string | null = token) => {
      const request = apiRequest(path, init, key);
      return exports.default.fetch(new Request(request.url.replace("http://", "https://"), request));
    };
    const document = await overHttps("/oauth/client-metadata.json", {}, null);
    expect(document.status).toBe(200);
    expect(await document.json()).toEqual({
      client_id: "https://agentry.test/oauth/client-metadata.json",
      client_name: "Agentry",
      redirect_uris: ["https://agentry.test/oauth/callback"],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    });

    const { url } = mcpServer("oauth", "cimd-");
    const created = await overHttps("/v1/credentials", { body: { id: "cimd", type: "mcp_oauth", server_url: url } });
    expect(created.status).toBe(201);
    const { authorization_url } = await created.json<{ authorization_url: string }>();
    const asked = new URL(authorization_url).searchParams;
    expect([asked.get("client_id"), asked.get("redirect_uri")]).toEqual([
      "https://agentry.test/oauth/client-metadata.json",
      "https://agentry.test/oauth/callback",
    ]);
    const callback = new URL((await fetch(authorization_url, { redirect: "manual" })).headers.get("location") ?? "");
    const landed = await overHttps(`${callback.pathname}${callback.search}`, {}, null);
    expect(landed.status).toBe(200);
    const agent = await createAgent({ tools: [everything(url, { credential: "cimd" })] }, token);
    const run = await runTurn(agent.id, { input: '[[tool everything__echo {"message":"by document"}]]' }, token);
    expect(run.output).toBe("everything__echo returned: Echo: by document");

    // Over http no server could fetch the document: the same server gets a registered client.
    const plain = await api("/v1/credentials", { body: { id: "cimd-http", type: "mcp_oauth", server_url: url } }, token);
    const registered = new URL((await plain.json<{ authorization_url: string }>()).authorization_url).searchParams.get("client_id");
    expect(registered).toMatch(/^client-[0-9a-f-]{36}$/);
  });

  it("keeps an authorization started while a run refreshes the credential's token", async () => {
    const token = await createTenantToken(uniqueTenant("oauth-restart"));
    const { bucket, url } = mcpServer("oauth", "slow-");
    await authorizedCredential(token, url);
    const agent = await createAgent({ tools: [everything(url, { credential: "oauth-server" })] }, token);
    const input = (message: string) => `[[tool everything__echo {"message":"${message}"}]]`;
    const started = await (await postRun(agent.id, { input: input("one"), background: true }, token)).json<{ run_id: string }>();
    // While the token endpoint holds the run's refresh, the user asks for a new authorization URL.
    await oauthEvents(bucket, 2);
    const again = await api("/v1/credentials/oauth-server/authorize", { method: "POST" }, token);
    const { authorization_url } = await again.json<{ authorization_url: string }>();
    const first = await (await api(`/v1/agents/${agent.id}/runs/${started.run_id}?wait=20`, {}, token)).json<Run>();
    expect(first.output).toBe("everything__echo returned: Echo: one");
    // The run stored its new tokens without undoing the pending authorization: the user completes it.
    const redirect = new URL((await fetch(authorization_url, { redirect: "manual" })).headers.get("location") ?? "");
    expect((await api(`${redirect.pathname}${redirect.search}`, {}, null)).status).toBe(200);
    const next = await runTurn(agent.id, { input: input("two") }, token);
    expect(next.output).toBe("everything__echo returned: Echo: two");
  });

  it("ends a run whose tool needs a larger scope, naming it; authorizing again asks for it and the next turn works", async () => {
    const token = await createTenantToken(uniqueTenant("oauth-scope"));
    const { url } = mcpServer("oauth");
    const { credential } = await authorizedCredential(token, url);
    // The server's 401 asked for mcp:read; its `note` tool answers 403 insufficient_scope without notes:write.
    expect(new URL(credential.authorization_url).searchParams.get("scope")).toBe("mcp:read");
    const agent = await createAgent({ tools: [everything(url, { credential: "oauth-server" })] }, token);
    const input = '[[tool everything__note {"text":"hello"}]]';
    const refused = await runTurn(agent.id, { input }, token);
    expect(refused.status).toBe("error");
    expect(refused.error).toEqual({
      type: "tool_error",
      message:
        'MCP server everything needs the scope "mcp:read notes:write" (it answered 403 insufficient_scope); authorize the credential oauth-server again (POST /v1/credentials/oauth-server/authorize) to grant it',
      retryable: false,
    });
    const again = await api("/v1/credentials/oauth-server/authorize", { method: "POST" }, token);
    const { authorization_url } = await again.json<{ authorization_url: string }>();
    expect(new URL(authorization_url).searchParams.get("scope")).toBe("mcp:read notes:write");
    const redirect = new URL((await fetch(authorization_url, { redirect: "manual" })).headers.get("location") ?? "");
    expect((await api(`${redirect.pathname}${redirect.search}`, {}, null)).status).toBe(200);
    const done = await runTurn(agent.id, { input }, token);
    expect(done.output).toBe("everything__note returned: noted: hello");
  });

  it("refuses an mcp_oauth credential without server_url, a forged callback state, and an agent on another server_url", async () => {
    const token = await createTenantToken(uniqueTenant("oauth-bad"));
    const missing = await api("/v1/credentials", { body: { id: "o", type: "mcp_oauth" } }, token);
    expect(missing.status).toBe(400);
    expect((await missing.json<ErrorBody>()).error.details.fields?.map((f) => f.path)).toEqual(["server_url"]);
    expect((await api("/oauth/callback?code=x&state=bm9wZQ", {}, null)).status).toBe(400);
    await api("/v1/credentials", { body: { id: "plain", type: "mcp", token: "t" } }, token);
    const notOAuth = await api("/v1/credentials/plain/authorize", { method: "POST" }, token);
    expect(notOAuth.status).toBe(400);
    const { url } = mcpServer("oauth");
    await authorizedCredential(token, url, "bound");
    const elsewhere = await api(
      "/v1/agents",
      { body: { provider: "mock", model: "m", tools: [everything(mcpServer("oauth").url, { credential: "bound" })] } },
      token,
    );
    expect(elsewhere.status).toBe(400);
    expect((await elsewhere.json<ErrorBody>()).error.details.fields?.map((f) => f.path)).toEqual(["tools.0.credential"]);
  });
});
