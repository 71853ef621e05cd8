import { describe, expect, it } from "vitest";
import { api, createAgent, createTenantToken } from "./support/http";
import { runTurn } from "./support/runs";

describe("tenant isolation", () => {
  it("answers 404 to tenant B for tenant A's agent, session and run, as if they did not exist", async () => {
    const tokenA = await createTenantToken();
    const tokenB = await createTenantToken();
    const agent = await createAgent({ tools: [{ type: "client", name: "ask", parameters: { type: "object", properties: {} } }] }, tokenA);
    const paused = await runTurn(agent.id, { input: "[[tool ask {}]]" }, tokenA);
    const run = paused.id;
    const session = paused.session_id;

    const foreign: [string, string, unknown?][] = [
      ["GET", `/v1/agents/${agent.id}`],
      ["PATCH", `/v1/agents/${agent.id}`, { name: "stolen" }],
      ["DELETE", `/v1/agents/${agent.id}`],
      ["POST", `/v1/agents/${agent.id}/runs`, { input: "hi" }],
      ["GET", `/v1/agents/${agent.id}/runs/${run}`],
      ["POST", `/v1/agents/${agent.id}/runs/${run}/cancel`],
      [
        "POST",
        `/v1/agents/${agent.id}/runs/${run}/continue`,
        { tool_results: [{ tool_call_id: paused.required_actions[0]!.tool_call_id, output: "x" }] },
      ],
      ["GET", `/v1/sessions/${session}`],
      ["GET", `/v1/sessions/${session}/transcript`],
      ["DELETE", `/v1/sessions/${session}`],
    ];
    for (const [method, path, body] of foreign) {
      const response = await api(path, { method, body }, tokenB);
      expect(response.status, `${method} ${path}`).toBe(404);
      expect((await response.json<{ error: { type: string } }>()).error.type).toBe("not_found");
    }
    const lists = await Promise.all(
      [`/v1/agents`, `/v1/sessions`, `/v1/agents/${agent.id}/runs`].map(async (p) =>
        (await api(p, {}, tokenB)).json<{ data: unknown[] }>(),
      ),
    );
    expect(lists.map((l) => l.data)).toEqual([[], [], []]);

    // Tenant A still sees all of it, unchanged.
    expect((await api(`/v1/agents/${agent.id}/runs/${run}`, {}, tokenA)).status).toBe(200);
    const stillPaused = await (await api(`/v1/agents/${agent.id}/runs/${run}`, {}, tokenA)).json<{ status: string }>();
    expect(stillPaused.status).toBe("paused");
    expect((await api(`/v1/agents/${agent.id}`, {}, tokenA)).status).toBe(200);
  });

  it("gives two tenants who choose the same session id two separate sessions", async () => {
    const tokenA = await createTenantToken();
    const tokenB = await createTenantToken();
    const agentA = await createAgent({ id: "support" }, tokenA);
    const agentB = await createAgent({ id: "support" }, tokenB);
    const a = await runTurn(agentA.id, { input: "from A", session_id: "shared-name" }, tokenA);
    const b = await runTurn(agentB.id, { input: "from B", session_id: "shared-name" }, tokenB);
    expect(a.output).toBe("You said: from A");
    expect(b.output).toBe("You said: from B");
    const transcriptA = await (await api(`/v1/sessions/shared-name/transcript`, {}, tokenA)).json<{ data: unknown[] }>();
    expect(transcriptA.data).toHaveLength(2);
  });
});
