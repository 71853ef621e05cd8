/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";
import { EVENT_CATALOGUE, runEventSchema, TERMINAL_EVENT_TYPES } from "../src/session";
import { storedEvents } from "./support/events";
import { api, createAgent } from "./support/http";
import { runTurn, type Run, type RunEvent } from "./support/runs";

const continueRun = async (agentId: string, runId: string, body: Record<string, unknown>) =>
  (await api(`/v1/agents/${agentId}/runs/${runId}/continue`, { body })).json<Run>();

describe("the event catalogue", () => {
  it("describes every event of a run with tools, a retry, a pause and continue, compaction, a fork and a cancel", async () => {
    const agent = await createAgent({
      retries: 2,
      delay_between_retries: 0.01,
      compaction: { enabled: true, trigger_tokens: 1000, keep_last_messages: 2 },
      tools: [
        { type: "builtin", name: "current_time" },
        { type: "client", name: "ask_user", parameters: { type: "object", properties: { q: { type: "string" } } } },
      ],
    });
    const session_id = `catalogue-${crypto.randomUUID()}`;
    const runs: string[] = [];
    const turn = async (input: string) => {
      const run = await runTurn(agent.id, { input, session_id });
      runs.push(run.id);
      return run;
    };
    // Tools (a builtin, an unknown one and a client one), then a pause answered by a continue.
    const paused = await turn('[[tool current_time {}]] [[tool nope {}]] [[tool ask_user {"q":"name?"}]] hello');
    expect(paused.status).toBe("paused");
    const action = paused.required_actions[0]!;
    expect((await continueRun(agent.id, paused.id, { tool_results: [{ tool_call_id: action.tool_call_id, output: "Ada" }] })).status).toBe(
      "completed",
    );
    // A retried model call, then long answers that make the next turn compact.
    expect((await turn("[[fail 529 x1]] [[words 400]] again")).status).toBe("completed");
    expect((await turn("[[words 400]] more")).status).toBe("completed");
    expect((await turn("three")).status).toBe("completed");
    // A fork from the first run's checkpoint.
    const fork = await continueRun(agent.id, paused.id, { fork: true, input: "instead" });
    expect(fork.status).toBe("completed");
    runs.push(fork.id);
    // A paused run cancelled.
    const toCancel = await turn('[[tool ask_user {"q":"again?"}]] wait');
    expect((await (await api(`/v1/agents/${agent.id}/runs/${toCancel.id}/cancel`, { method: "POST" })).json<Run>()).status).toBe(
      "cancelled",
    );

    const events: RunEvent[] = (await Promise.all(runs.map((id) => storedEvents(agent.id, id)))).flat();
    const invalid = events.flatMap((event) => {
      const parsed = runEventSchema.safeParse(event);
      return parsed.success ? [] : [{ type: event.type, data: event.data, issues: parsed.error.issues }];
    });
    expect(invalid).toEqual([]);
    const seen = new Set(events.map((event) => event.type));
    expect([...seen].sort()).toEqual(
      expect.arrayContaining([
        "checkpoint",
        "compaction",
        "content_delta",
        "model_request_completed",
        "model_request_started",
        "retry",
        "run_cancelled",
        "run_completed",
        "run_continued",
        "run_paused",
        "run_started",
        "tool_call_completed",
        "tool_call_error",
        "tool_call_started",
      ]),
    );
  });

  it("marks the four stretch-ending events terminal", () => {
    expect([...TERMINAL_EVENT_TYPES].sort()).toEqual(["run_cancelled", "run_completed", "run_error", "run_paused"]);
    expect(Object.keys(EVENT_CATALOGUE)).toHaveLength(22);
  });

  it("is listed whole in docs/streaming.md, with each type's data fields and terminal flag", () => {
    const streaming = import.meta.glob("../docs/streaming.md", { query: "?raw", import: "default", eager: true }) as Record<string, string>;
    const rows = new Map(
      [...(streaming["../docs/streaming.md"] ?? "").matchAll(/^\| `([a-z_]+)` \| `\{ ([^}]*) \}` \| (yes|no) \|/gm)].map((m) => [
        m[1],
        [m[2], m[3]],
      ]),
    );
    const expected = Object.entries(EVENT_CATALOGUE).map(([type, entry]) => [
      type,
      [Object.keys((entry.data as unknown as { shape: Record<string, unknown> }).shape).join(", "), entry.terminal ? "yes" : "no"],
    ]);
    expect([...rows]).toEqual(expected);
  });
});
