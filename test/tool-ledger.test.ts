import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, createAgent } from "./support/http";
import { runTurn, transcriptOf, type Run } from "./support/runs";

const stubOf = (sessionId: string) => env.SESSION.get(env.SESSION.idFromName(`default/${sessionId}`));
const ask = { type: "client", name: "ask", parameters: { type: "object", properties: {} } };

async function answer(agentId: string, run: Run, toolCallId: string, output: string): Promise<Run> {
  const response = await api(`/v1/agents/${agentId}/runs/${run.id}/continue`, {
    body: { tool_results: [{ tool_call_id: toolCallId, output }] },
  });
  expect(response.status).toBe(200);
  return response.json<Run>();
}

describe("the tool-result ledger", () => {
  it("keys a result by run and call: a provider that reuses a tool_call_id never gets another run's result", async () => {
    const agent = await createAgent({ tools: [ask] });
    const sessionId = `ledger-${crypto.randomUUID()}`;
    const first = await runTurn(agent.id, { input: "[[tool ask {}]] first", session_id: sessionId });
    const reused = first.required_actions[0]!.tool_call_id;
    expect((await answer(agent.id, first, reused, "first answer")).status).toBe("completed");

    const second = await runTurn(agent.id, { input: "[[tool ask {}]] second", session_id: sessionId });
    // The provider answers the second run with the first run's tool_call_id (as an endpoint that counts
    // its ids per response would): the stored step and the pending action carry it.
    const own = second.required_actions[0]!.tool_call_id;
    await runInDurableObject(stubOf(sessionId), (_instance, state) => {
      for (const table of ["messages", "runs"]) {
        const column = table === "messages" ? "content" : "body";
        state.storage.sql.exec(
          `UPDATE ${table} SET ${column} = replace(${column}, ?, ?) WHERE ${table === "messages" ? "run_id" : "id"} = ?`,
          own,
          reused,
          second.id,
        );
      }
    });
    // Stored messages are never rewritten, so an object keeps them parsed: a new instance reads the edited rows.
    await evictDurableObject(stubOf(sessionId));
    const done = await answer(agent.id, second, reused, "second answer");
    expect(done.status).toBe("completed");
    expect(done.output).toContain("ask returned: second answer");
    const results = (await transcriptOf(sessionId)).filter((m) => m.run_id === second.id && m.role === "tool");
    expect(results.map((m) => m.content)).toEqual([
      [{ type: "tool_result", tool_call_id: reused, output: "second answer", is_error: false }],
    ]);
  });
});
