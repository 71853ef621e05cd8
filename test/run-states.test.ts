import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { RunLifecycle } from "../src/session/object/run-lifecycle";
import { canMove, IllegalTransitionError, move, RUN_TRANSITIONS } from "../src/session/object/run-states";
import type { SessionStore } from "../src/session/store/session-store";
import { sessionStub } from "./support/held-d1";
import { api, createAgent } from "./support/http";
import { runTurn, type Run } from "./support/runs";

describe("a run's state table", () => {
  it("allows exactly the documented moves", () => {
    expect(RUN_TRANSITIONS).toEqual({
      new: ["queued", "pending", "running"],
      queued: ["running", "cancelled"],
      pending: ["running", "cancelled", "error"],
      running: ["paused", "completed", "error", "cancelled"],
      paused: ["running", "cancelled"],
      completed: [],
      error: [],
      cancelled: [],
    });
    expect(canMove("paused", "running")).toBe(true);
    expect(canMove("paused", "completed")).toBe(false);
  });

  it("refuses an illegal move and leaves the run as it was", () => {
    const run = { status: "completed" as const };
    expect(() => move(run, "running")).toThrow(new IllegalTransitionError("completed", "running"));
    expect(run.status).toBe("completed");
  });

  it("refuses to finish a run that has ended, in the session object: its status and its answer stay", async () => {
    const agent = await createAgent();
    const run = await runTurn(agent.id, { input: "done" });
    expect(run.status).toBe("completed");
    const refusal = await runInDurableObject(sessionStub(run.session_id), async (instance) => {
      const { core, life } = instance as unknown as { core: { store: SessionStore }; life: RunLifecycle };
      const stored = core.store.getRun(run.id);
      if (!stored) throw new Error("the run is not stored");
      return life.finish(stored, "cancelled", {}).then(
        () => null,
        (error: unknown) => error,
      );
    });
    expect(refusal).toBeInstanceOf(IllegalTransitionError);
    expect((refusal as Error).message).toBe("A run cannot go from completed to cancelled");
    const after = await (await api(`/v1/agents/${agent.id}/runs/${run.id}`)).json<Run>();
    expect(after).toMatchObject({ status: "completed", output: run.output });
  });
});
