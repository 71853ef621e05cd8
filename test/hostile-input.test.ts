import { openRunBody, openRunInputs } from "../src/run-model/compact-run-body";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH, PRUNED } from "../src/core/json-depth";
import { MAX_STEP_OUTPUT_BYTES, MAX_TOOL_OUTPUT_BYTES } from "../src/tools/outcome";
import { connectSocket } from "./support/events";
import { ADMIN_TOKEN, api, createAgent } from "./support/http";
import { postRun, runTurn, transcriptOf, type Run } from "./support/runs";

type ErrorBody = { error: { type: string; message: string; details: { fields?: { path: string; message: string }[] } } };

/** `{"a":{"a":…1…}}`: a JSON object `depth` levels deep. */
const deepObject = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

const errorOf = (response: Response) => response.json<ErrorBody>();
const fieldPaths = async (response: Response) => ((await errorOf(response)).error.details.fields ?? []).map((f) => f.path);
const clientTool = (name: string) => ({ type: "client", name, description: name, parameters: { type: "object", properties: {} } });
const webhook = (name: string, url: string) => ({
  type: "webhook",
  name,
  description: name,
  parameters: { type: "object", properties: {} },
  url,
});

/** The session answers every read and the next turn, and can be deleted. */
async function expectUsable(agentId: string, run: Run): Promise<void> {
  expect((await api(`/v1/agents/${agentId}/runs/${run.id}`)).status).toBe(200);
  expect((await api(`/v1/agents/${agentId}/runs/${run.id}/events`)).status).toBe(200);
  expect((await api(`/v1/agents/${agentId}/runs?session_id=${run.session_id}`)).status).toBe(200);
  expect((await api(`/v1/sessions/${run.session_id}`)).status).toBe(200);
  expect((await api(`/v1/sessions/${run.session_id}/transcript`)).status).toBe(200);
  const next = await runTurn(agentId, { input: "still there?", session_id: run.session_id });
  expect(next.status).toBe("completed");
  expect((await api(`/v1/sessions/${run.session_id}`, { method: "DELETE" })).status).toBe(204);
}

describe("deeply nested JSON", () => {
  it.each([5_000, 50_000])("answers tool-call arguments nested %i levels with a tool error the model sees", async (depth) => {
    const agent = await createAgent({ tools: [clientTool("ask")] });
    const run = await runTurn(agent.id, { input: `[[tool ask ${deepObject(depth)}]]` });
    const error = `The arguments of ask nest deeper than ${MAX_JSON_DEPTH} levels; send a flatter JSON object`;
    expect(run).toMatchObject({ status: "completed", output: `ask returned: ${error}`, required_actions: [] });
    const transcript = await transcriptOf(run.session_id);
    const call = transcript[1]?.content[0];
    // The model's text is kept as it came (a string is readable at any depth); the call got the error.
    expect(call).toMatchObject({ type: "tool_call", name: "ask", arguments: deepObject(depth) });
    expect(transcript[2]?.content[0]).toMatchObject({ type: "tool_result", output: error, is_error: true });
    await expectUsable(agent.id, run);
  });

  it("never calls a webhook with arguments nested too deep", async () => {
    const bucket = crypto.randomUUID();
    const agent = await createAgent({ tools: [webhook("hook", `${env.TOOL_SERVER_URL}/echo/${bucket}`)] });
    const run = await runTurn(agent.id, { input: `[[tool hook ${deepObject(MAX_JSON_DEPTH + 1)}]]` });
    expect(run.status).toBe("completed");
    expect(run.output).toContain(`nest deeper than ${MAX_JSON_DEPTH} levels`);
    expect(await (await fetch(`${env.TOOL_SERVER_URL}/calls/${bucket}`)).json()).toEqual([]);
  });

  it("refuses an agent whose metadata nests 20,000 levels, and creates nothing", async () => {
    const id = `deep-${crypto.randomUUID()}`;
    const response = await api("/v1/agents", { body: `{"id":"${id}","provider":"mock","model":"m","metadata":${deepObject(20_000)}}` });
    expect(response.status).toBe(400);
    const body = await errorOf(response);
    expect(body.error.type).toBe("invalid_request");
    expect(body.error.details.fields).toEqual([
      { path: "metadata", message: `nests deeper than ${MAX_JSON_DEPTH} levels, the limit of every JSON input` },
    ]);
    expect((await api(`/v1/agents/${id}`)).status).toBe(404);
  });

  it("takes a body exactly as deep as the limit and refuses one level more", async () => {
    // The body is level 1 and `metadata` level 2.
    const within = await api("/v1/agents", { body: `{"provider":"mock","model":"m","metadata":{"x":${deepObject(MAX_JSON_DEPTH - 2)}}}` });
    expect(within.status).toBe(201);
    const over = await api("/v1/agents", { body: `{"provider":"mock","model":"m","metadata":{"x":${deepObject(MAX_JSON_DEPTH - 1)}}}` });
    expect(over.status).toBe(400);
    expect(await fieldPaths(over)).toEqual(["metadata"]);
  });

  it("refuses a PATCH with deep metadata and keeps the agent as it was", async () => {
    const agent = await createAgent();
    const response = await api(`/v1/agents/${agent.id}`, { method: "PATCH", body: `{"metadata":${deepObject(5_000)}}` });
    expect(response.status).toBe(400);
    expect(await fieldPaths(response)).toEqual(["metadata"]);
    expect(await (await api(`/v1/agents/${agent.id}`)).json()).toEqual(agent);
    expect((await runTurn(agent.id, { input: "hi" })).status).toBe("completed");
  });

  it("refuses deep run metadata, output_schema and tool parameters, naming each field", async () => {
    const agent = await createAgent();
    const before = await (await api(`/v1/agents/${agent.id}/runs`)).json<{ data: Run[] }>();
    const metadata = await api(`/v1/agents/${agent.id}/runs`, { body: `{"input":"hi","metadata":${deepObject(2_500)}}` });
    expect(metadata.status).toBe(400);
    expect(await fieldPaths(metadata)).toEqual(["metadata"]);
    const schema = `{"type":"object","properties":{"x":${'{"type":"object","properties":{"x":'.repeat(3_000)}{}${"}}".repeat(3_000)}}}`;
    const outputSchema = await api(`/v1/agents/${agent.id}/runs`, { body: `{"input":"hi","output_schema":${schema}}` });
    expect(outputSchema.status).toBe(400);
    expect(await fieldPaths(outputSchema)).toEqual(["output_schema"]);
    const tools = await api("/v1/agents", {
      body: `{"provider":"mock","model":"m","tools":[{"type":"client","name":"t","parameters":${schema}}]}`,
    });
    expect(tools.status).toBe(400);
    expect(await fieldPaths(tools)).toEqual(["tools"]);
    expect(await (await api(`/v1/agents/${agent.id}/runs`)).json()).toEqual(before);
  });

  it("reads an agent stored with deep metadata before the bound existed: shown cut, runnable, deletable", async () => {
    const tenant = "default";
    const id = `old-${crypto.randomUUID()}`;
    const now = new Date().toISOString();
    const definition = `{"name":null,"provider":"mock","model":"m","base_url":null,"credential":null,"instructions":"","tools":[],"output_schema":null,"retries":0,"delay_between_retries":1,"exponential_backoff":false,"max_steps":25,"max_output_tokens":4096,"max_cost_usd":null,"prices":null,"compaction":null,"store_events":true,"metadata":{"x":${deepObject(20_000)}}}`;
    await env.DB.prepare("INSERT INTO agents (tenant, id, version, definition, created_at, updated_at) VALUES (?, ?, 1, ?, ?, ?)")
      .bind(tenant, id, definition, now, now)
      .run();
    const read = await api(`/v1/agents/${id}`);
    expect(read.status).toBe(200);
    const agent = await read.json<{ metadata: Record<string, unknown> }>();
    // The value is kept down to the stored-depth bound, then replaced by a note (the definition
    // is level 1, `metadata` level 2, `metadata.x` level 3).
    let node: unknown = agent.metadata.x;
    let depth = 3;
    while (typeof node === "object" && node !== null) {
      node = (node as { a: unknown }).a;
      depth++;
    }
    expect(node).toBe(PRUNED);
    expect(depth).toBe(2 * MAX_JSON_DEPTH + 1);
    expect((await api("/v1/agents?limit=100")).status).toBe(200);
    const run = await runTurn(id, { input: "hi" });
    expect(run.status).toBe("completed");
    await expectUsable(id, run);
    expect((await api(`/v1/agents/${id}`, { method: "DELETE" })).status).toBe(204);
  });

  it("reads a session stored with deep values before the bound existed (rebuilt from D1)", async () => {
    const agent = await createAgent({ tools: [clientTool("ask")] });
    const source = await runTurn(agent.id, { input: "hello" });
    const sessionId = `old-${crypto.randomUUID()}`;
    const runId = `run_old${crypto.randomUUID().replace(/-/g, "")}`;
    const deep = deepObject(20_000);
    const row = await env.DB.prepare(
      "SELECT r.body AS body, i.body AS once, r.created_at AS created_at FROM runs r JOIN run_inputs i ON i.id = r.id WHERE r.id = ?",
    )
      .bind(source.id)
      .first<{ body: string; once: string; created_at: string }>();
    // A row mirrored before the write-once split: everything in its body, no `run_inputs` row.
    const whole = JSON.stringify({
      ...(JSON.parse(await openRunBody(row!.body)) as object),
      ...(JSON.parse(await openRunInputs(row!.once)) as object),
    });
    const body = whole
      .replaceAll(source.id, runId)
      .replaceAll(source.session_id, sessionId)
      .replace('"metadata":{}', `"metadata":{"x":${deep}}`);
    expect(body).toContain(deep);
    const content = `[{"type":"tool_call","tool_call_id":"toolu_old","name":"ask","arguments":${deep}}]`;
    await env.DB.batch([
      env.DB.prepare(
        "INSERT INTO sessions (tenant, id, agent_id, last_seq, created_at, updated_at) VALUES ('default', ?, ?, 0, ?, ?)",
      ).bind(sessionId, agent.id, row!.created_at, row!.created_at),
      env.DB.prepare(
        "INSERT INTO runs (id, tenant, session_id, agent_id, agent_version, status, body, created_at, updated_at) VALUES (?, 'default', ?, ?, 1, 'completed', ?, ?, ?)",
      ).bind(runId, sessionId, agent.id, body, row!.created_at, row!.created_at),
      env.DB.prepare(
        "INSERT INTO messages (tenant, session_id, idx, run_id, role, content, created_at) VALUES ('default', ?, 0, ?, 'user', ?, ?)",
      ).bind(sessionId, runId, '[{"type":"text","text":"hello"}]', row!.created_at),
      env.DB.prepare(
        "INSERT INTO messages (tenant, session_id, idx, run_id, role, content, created_at) VALUES ('default', ?, 1, ?, 'assistant', ?, ?)",
      ).bind(sessionId, runId, content, row!.created_at),
    ]);
    const transcript = await transcriptOf(sessionId);
    expect(transcript).toHaveLength(2);
    expect(JSON.stringify(transcript[1]?.content)).toContain(PRUNED);
    const old = await api(`/v1/agents/${agent.id}/runs/${runId}`);
    expect(old.status).toBe(200);
    expect(JSON.stringify(await old.json())).toContain(PRUNED);
    await expectUsable(agent.id, { ...source, id: runId, session_id: sessionId });
  });
});

describe("sizes of stored fields", () => {
  it("refuses a 9 MB client tool output with 413 naming it; the run stays paused and takes a smaller one", async () => {
    const agent = await createAgent({ tools: [clientTool("ask")] });
    const paused = await runTurn(agent.id, { input: "[[tool ask {}]]" });
    expect(paused.status).toBe("paused");
    const callId = paused.required_actions[0]!.tool_call_id;
    const huge = await api(`/v1/agents/${agent.id}/runs/${paused.id}/continue`, {
      body: { tool_results: [{ tool_call_id: callId, output: "é".repeat(4_500_000) }] },
    });
    expect(huge.status).toBe(413);
    const error = await errorOf(huge);
    expect(error.error.type).toBe("payload_too_large");
    expect(error.error.details.fields?.map((f) => f.path)).toEqual(["tool_results.0.output"]);
    expect((await (await api(`/v1/agents/${agent.id}/runs/${paused.id}`)).json<Run>()).status).toBe("paused");

    const atLimit = "x".repeat(MAX_TOOL_OUTPUT_BYTES - 2);
    const resumed = await api(`/v1/agents/${agent.id}/runs/${paused.id}/continue`, {
      body: { tool_results: [{ tool_call_id: callId, output: atLimit }] },
    });
    expect(resumed.status).toBe(200);
    expect((await resumed.json<Run>()).status).toBe("completed");
    await expectUsable(agent.id, paused);
  });

  it("refuses client outputs that are over the step's limit together", async () => {
    const count = Math.ceil(MAX_STEP_OUTPUT_BYTES / MAX_TOOL_OUTPUT_BYTES) + 1;
    const agent = await createAgent({ tools: [clientTool("ask")] });
    const paused = await runTurn(agent.id, { input: `[[parallel]] ${"[[tool ask {}]] ".repeat(count)}` });
    expect(paused.required_actions).toHaveLength(count);
    const output = "x".repeat(MAX_TOOL_OUTPUT_BYTES - 2);
    const response = await api(`/v1/agents/${agent.id}/runs/${paused.id}/continue`, {
      body: { tool_results: paused.required_actions.map((a) => ({ tool_call_id: a.tool_call_id, output })) },
    });
    expect(response.status).toBe(413);
    expect(await fieldPaths(response)).toEqual(["tool_results"]);
    expect((await (await api(`/v1/agents/${agent.id}/runs/${paused.id}`)).json<Run>()).status).toBe("paused");
  });

  it("refuses run metadata over its limit with 413 naming metadata, and stores no run", async () => {
    const agent = await createAgent();
    const response = await postRun(agent.id, { input: "hi", metadata: { note: "x".repeat(70_000) } });
    expect(response.status).toBe(413);
    expect(await fieldPaths(response)).toEqual(["metadata"]);
    expect(await (await api(`/v1/agents/${agent.id}/runs`)).json()).toEqual({ data: [], next_cursor: null });
  });

  it("turns a webhook answer over the limit into a tool error the model sees", async () => {
    const bucket = crypto.randomUUID();
    const agent = await createAgent({ tools: [webhook("big", `${env.TOOL_SERVER_URL}/big/${bucket}?bytes=9000000`)] });
    const run = await runTurn(agent.id, { input: "[[tool big {}]]" });
    expect(run).toMatchObject({
      status: "completed",
      output: `big returned: Webhook answer is over ${MAX_TOOL_OUTPUT_BYTES} bytes, the limit of a tool output`,
    });
    await expectUsable(agent.id, run);
  });

  it("keeps a step's webhook outputs within the step's limit: the one that passes it is dropped", async () => {
    const bucket = crypto.randomUUID();
    const count = Math.ceil(MAX_STEP_OUTPUT_BYTES / MAX_TOOL_OUTPUT_BYTES) + 1;
    const agent = await createAgent({ tools: [webhook("big", `${env.TOOL_SERVER_URL}/big/${bucket}?bytes=${MAX_TOOL_OUTPUT_BYTES - 2}`)] });
    const run = await runTurn(agent.id, { input: `[[parallel]] ${"[[tool big {}]] ".repeat(count)}` });
    expect(run.status).toBe("completed");
    const results = (await transcriptOf(run.session_id))[2]?.content ?? [];
    expect(results).toHaveLength(count);
    expect(results.slice(0, count - 1).every((r) => r.is_error === false)).toBe(true);
    expect(results.at(-1)).toMatchObject({
      is_error: true,
      output: `Output dropped: this step's tool outputs together are over ${MAX_STEP_OUTPUT_BYTES} bytes`,
    });
    await expectUsable(agent.id, run);
  });
});

describe("query tokens, query parameters and upgrades", () => {
  it("takes ?token= only on a run's events and a session's WebSocket", async () => {
    await api("/v1/agents", { body: { id: "events", provider: "mock", model: "m" } });
    const viaQuery = await api(`/v1/agents/events?token=${ADMIN_TOKEN}`, {}, null);
    expect(viaQuery.status).toBe(401);
    expect((await api(`/v1/sessions/events?token=${ADMIN_TOKEN}`, {}, null)).status).toBe(401);
    const agent = await createAgent();
    const run = await runTurn(agent.id, { input: "hi" });
    expect((await api(`/v1/agents/${agent.id}/runs/${run.id}/events?token=${ADMIN_TOKEN}`, {}, null)).status).toBe(200);
    expect((await api(`/v1/agents/${agent.id}/runs/${run.id}?token=${ADMIN_TOKEN}`, {}, null)).status).toBe(401);
  });

  it.each(["/v1/agents", "/v1/keys", "/v1/sessions"])("refuses an unknown query parameter on GET %s", async (path) => {
    const response = await api(`${path}?limt=5`);
    expect(response.status).toBe(400);
    expect(await fieldPaths(response)).toEqual(["query.limt"]);
  });

  it("refuses an upgrade without a valid Sec-WebSocket-Key or Version with a JSON 400 naming the header", async () => {
    const agent = await createAgent();
    const run = await runTurn(agent.id, { input: "hi" });
    const noKey = await connectSocket(run.session_id, { headers: { "sec-websocket-key": "" } });
    expect(noKey.response.status).toBe(400);
    expect(await fieldPaths(noKey.response)).toEqual(["headers.sec-websocket-key"]);
    const shortKey = await connectSocket(run.session_id, { headers: { "sec-websocket-key": btoa("short") } });
    expect(await fieldPaths(shortKey.response)).toEqual(["headers.sec-websocket-key"]);
    const oldVersion = await connectSocket(run.session_id, { headers: { "sec-websocket-version": "8" } });
    expect(oldVersion.response.status).toBe(400);
    expect(await fieldPaths(oldVersion.response)).toEqual(["headers.sec-websocket-version"]);
    const good = await connectSocket(run.session_id);
    expect(good.response.status).toBe(101);
    good.socket?.close();
  });
});
