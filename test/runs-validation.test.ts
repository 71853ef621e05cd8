import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, createAgent, type ApiInit } from "./support/http";
import { runTurn } from "./support/runs";

type ErrorBody = { error: { type: string; message: string; details: { fields?: { path: string; message: string }[] } } };

const tableCounts = async () => {
  const rows = await env.DB.batch(["sessions", "runs", "messages"].map((t) => env.DB.prepare(`SELECT COUNT(*) AS n FROM ${t}`)));
  return rows.map((r) => (r.results[0] as { n: number }).n);
};

async function expectRejected(response: Response, status: number, path?: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toContain("application/json");
  const body = await response.json<ErrorBody>();
  expect(body.error.type).toBe(status === 400 ? "invalid_request" : status === 413 ? "payload_too_large" : body.error.type);
  if (path) expect(body.error.details.fields?.map((f) => f.path)).toContain(path);
  expect(JSON.stringify(body)).not.toMatch(/at .*\.ts:\d+/);
  return body;
}

describe("bad input on the runs and sessions routes", () => {
  it("refuses a fork whose input would not fit in a stored row, and stores nothing", async () => {
    const agent = await createAgent();
    const source = await runTurn(agent.id, { input: "the source" });
    const before = await tableCounts();
    const fork = await api(`/v1/agents/${agent.id}/runs/${source.id}/continue`, { body: { fork: true, input: "€".repeat(600_000) } });
    const body = await expectRejected(fork, 413, "input");
    expect(body.error.message).toMatch(/over the limit of 1800000/);
    expect(await tableCounts()).toEqual(before);
  });

  it("refuses an input that fits alone but not with the largest answer its agent allows", async () => {
    const agent = await createAgent({ max_output_tokens: 200_000 });
    const before = await tableCounts();
    const body = await expectRejected(await api(`/v1/agents/${agent.id}/runs`, { body: { input: "x".repeat(1_000_000) } }), 413, "input");
    expect(body.error.message).toContain("max_output_tokens 200000");
    expect(await tableCounts()).toEqual(before);
  });

  it("answers 4xx JSON naming the field, and stores nothing", async () => {
    const agent = await createAgent({ tools: [{ type: "client", name: "ask", parameters: { type: "object", properties: {} } }] });
    const paused = await runTurn(agent.id, { input: "[[tool ask {}]]" });
    const before = await tableCounts();
    const runs = `/v1/agents/${agent.id}/runs`;
    const cases: [string, ApiInit, number, string?][] = [
      [runs, { body: {} }, 400, "input"],
      [runs, { body: { input: 42 } }, 400, "input"],
      [runs, { body: { input: [] } }, 400, "input"],
      [runs, { body: { input: "" } }, 400, "input"],
      [runs, { body: { input: " \n\n\t" } }, 400, "input"],
      [
        runs,
        {
          body: {
            input: [
              { type: "text", text: "\n\n" },
              { type: "text", text: " " },
            ],
          },
        },
        400,
        "input",
      ],
      [runs, { body: { input: "hi", sesion_id: "typo" } }, 400, "sesion_id"],
      [runs, { body: { input: "hi", session_id: "has/slash" } }, 400, "session_id"],
      [runs, { body: { input: "hi", stream: "yes" } }, 400, "stream"],
      [runs, { body: { input: [{ type: "text" }] } }, 400],
      [runs, { body: { input: [{ type: "image", media_type: "image/png", data: "AAAA" }] } }, 400, "input.0.data"],
      [runs, { body: { input: "hi", output_schema: { type: "array" } } }, 400, "output_schema.type"],
      [runs, { body: { input: "hi" }, headers: { "idempotency-key": "k".repeat(256) } }, 400, "headers.idempotency-key"],
      [runs, { body: "{not json", headers: { "content-type": "application/json" } }, 400],
      [runs, { body: '""', headers: { "content-type": "application/json" } }, 400, "body"],
      [runs, { body: "[]", headers: { "content-type": "application/json" } }, 400, "body"],
      [`${runs}/${paused.id}/continue`, { body: "null", headers: { "content-type": "application/json" } }, 400, "body"],
      [runs, { body: "input=hi", headers: { "content-type": "application/x-www-form-urlencoded" } }, 400, "content-type"],
      [runs, { body: { input: "x".repeat(1_000_001) } }, 413],
      // Under the character limit but over a row once stored: 600,000 three-byte characters are 1.8 MB of UTF-8.
      [runs, { body: { input: "€".repeat(600_000) } }, 413, "input"],
      [
        runs,
        {
          body: {
            input: [
              { type: "text", text: "€".repeat(300_000) },
              { type: "text", text: "€".repeat(300_000) },
            ],
          },
        },
        413,
        "input",
      ],
      [`${runs}?limit=0`, {}, 400, "query.limit"],
      [`${runs}?limit=101`, {}, 400, "query.limit"],
      [`${runs}?status=done`, {}, 400, "query.status"],
      [`${runs}?cursor=garbage`, {}, 400, "query.cursor"],
      [`${runs}/${paused.id}?wait=61`, {}, 400, "query.wait"],
      [`${runs}/${paused.id}?wait=-1`, {}, 400, "query.wait"],
      [`${runs}/${paused.id}/continue`, { body: { tool_results: "x" } }, 400, "tool_results"],
      [`${runs}/${paused.id}/continue`, { body: { tool_results: [{ tool_call_id: "x" }] } }, 400, "tool_results.0.output"],
      [`${runs}/${paused.id}/continue`, { body: { fork: true } }, 409],
      [`${runs}/${paused.id}/continue`, { body: { input: "more" } }, 400, "input"],
      [`${runs}/${paused.id}/continue`, { body: { continue_from: "last_user" } }, 400, "continue_from"],
      [`${runs}/${paused.id}/continue`, { body: { tool_results: [], extra: 1 } }, 400, "extra"],
      [`/v1/sessions?limit=abc`, {}, 400, "query.limit"],
      [`/v1/sessions/${paused.session_id}/transcript?run_id=a/b`, {}, 400],
      [`/v1/sessions/${paused.session_id}/transcript?foo=1`, {}, 400, "query.foo"],
    ];
    for (const [path, init, status, field] of cases) {
      const method = init.method ?? (init.body === undefined ? "GET" : "POST");
      await expectRejected(await api(path, { ...init, method }), status, field);
    }
    expect(await tableCounts()).toEqual(before);
    const run = await (await api(`${runs}/${paused.id}`)).json<{ status: string }>();
    expect(run.status).toBe("paused");
  });

  it("answers 404 JSON for unknown agents, runs and routes", async () => {
    const agent = await createAgent();
    await expectRejected(await api(`/v1/agents/nope/runs`, { body: { input: "hi" } }), 404);
    await expectRejected(await api(`/v1/agents/${agent.id}/runs/run_nope`), 404);
    await expectRejected(await api(`/v1/agents/${agent.id}/runs/run_nope/cancel`, { method: "POST" }), 404);
    await expectRejected(await api(`/v1/sessions/ses_nope`), 404);
    await expectRejected(await api(`/v1/no/such/route`), 404);
  });

  it("never changes a finished run: continuing it without an input is 400 and stores nothing", async () => {
    const agent = await createAgent();
    const run = await runTurn(agent.id, { input: "hi" });
    const before = await tableCounts();
    const continued = await api(`/v1/agents/${agent.id}/runs/${run.id}/continue`, { body: {} });
    await expectRejected(continued, 400, "input");
    const withResults = await api(`/v1/agents/${agent.id}/runs/${run.id}/continue`, {
      body: { input: "x", tool_results: [{ tool_call_id: "t", output: "o" }] },
    });
    await expectRejected(withResults, 400, "tool_results");
    const blank = await api(`/v1/agents/${agent.id}/runs/${run.id}/continue`, { body: { input: "\n\n" } });
    await expectRejected(blank, 400, "input");
    expect(await tableCounts()).toEqual(before);
    expect(await (await api(`/v1/agents/${agent.id}/runs/${run.id}`)).json()).toEqual(run);
  });
});
