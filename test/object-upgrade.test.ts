import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, createAgent } from "./support/http";
import { runTurn, type Run } from "./support/runs";

const stubOf = (sessionId: string) => env.SESSION.get(env.SESSION.idFromName(`default/${sessionId}`));
const tables = (sessionId: string) =>
  runInDurableObject(stubOf(sessionId), (_i, state) =>
    state.storage.sql
      .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_cf%' ESCAPE '\\' ORDER BY name")
      .toArray()
      .map((t) => t.name),
  );

describe("an object created before the tables added since", () => {
  it("creates them on first use, moves its old tool-result ledger, and goes on with its paused run", async () => {
    const agent = await createAgent({
      tools: [{ type: "client", name: "ask", description: "asks", parameters: { type: "object", properties: {} } }],
    });
    const paused = await runTurn(agent.id, { input: "[[tool ask {}]] one question" });
    expect(paused.status).toBe("paused");
    // The storage as the first objects had it: a ledger keyed by tool_call_id alone, and none of the later tables.
    await runInDurableObject(stubOf(paused.session_id), (_i, state) => {
      const sql = state.storage.sql;
      sql.exec(
        "CREATE TABLE tool_results (tool_call_id TEXT PRIMARY KEY, run_id TEXT NOT NULL, output TEXT NOT NULL, is_error INTEGER NOT NULL)",
      );
      sql.exec("INSERT INTO tool_results VALUES ('toolu_old', ?, 'old output', 0)", paused.id);
      for (const table of ["tool_ledger", "opened_runs", "quarantine", "events"]) sql.exec(`DROP TABLE ${table}`);
    });
    await abortAllDurableObjects();

    const callId = paused.required_actions[0]!.tool_call_id;
    const resumed = await api(`/v1/agents/${agent.id}/runs/${paused.id}/continue`, {
      body: { tool_results: [{ tool_call_id: callId, output: "yes" }] },
    });
    expect(resumed.status).toBe(200);
    expect((await resumed.json<Run>()).status).toBe("completed");
    expect(await tables(paused.session_id)).toEqual(expect.arrayContaining(["events", "opened_runs", "quarantine", "tool_ledger"]));
    expect(await tables(paused.session_id)).not.toContain("tool_results");
    const ledger = await runInDurableObject(stubOf(paused.session_id), (_i, state) =>
      state.storage.sql
        .exec<{ tool_call_id: string; output: string }>("SELECT tool_call_id, output FROM tool_ledger ORDER BY tool_call_id")
        .toArray(),
    );
    expect(ledger).toEqual([
      { tool_call_id: callId, output: "yes" },
      { tool_call_id: "toolu_old", output: "old output" },
    ]);
    const next = await runTurn(agent.id, { input: "and again", session_id: paused.session_id });
    expect(next.status).toBe("completed");
  });
});
