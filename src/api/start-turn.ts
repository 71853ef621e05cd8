import type { Context } from "hono";
import type { Agent, ObjectJsonSchema } from "../agents";
import { newId } from "../core/ids";
import { parseInput, resolveInput, type ContentPart } from "../media";
import type { RunAnswer } from "../session";
import { z } from "@hono/zod-openapi";
import { idempotentPlan } from "./idempotency";
import type { AppEnv } from "./router";
import { startWithMedia } from "./run-input";
import { assertRunRecordFits } from "./stored-limits";
import { runnableAgent } from "./runnable-agent";
import { callSession } from "./session-client";

const turnPlan = z.object({ session_id: z.string(), run_id: z.string() });

/** One new turn of an agent, as every HTTP surface that starts one describes it. */
export type Turn = {
  agent_id: string;
  input: string | ContentPart[];
  /** Absent: a new session. */
  session_id?: string;
  output_schema: ObjectJsonSchema | null;
  metadata: Record<string, unknown>;
  stream: boolean;
  background: boolean;
  /** Changes the agent for this run only (its instructions, say); the stored agent is untouched. */
  adapt?: (agent: Agent) => Agent;
};

/**
 * Starts a turn: checks its input, finds the runnable agent, plans the ids (replayed for a
 * repeated `Idempotency-Key` with the same `idempotencyBody`), stores its media and asks the
 * session. The caller checks its own body's limits first and renders the answer.
 */
export async function startTurn(c: Context<AppEnv>, idempotencyBody: unknown, turn: Turn): Promise<RunAnswer> {
  const parsed = parseInput(turn.input, c.env.ENVIRONMENT);
  const tenant = c.get("tenant");
  const found = await runnableAgent(c.env, tenant, turn.agent_id);
  const agent = turn.adapt ? turn.adapt(found) : found;
  assertRunRecordFits({ agent, input: parsed, output_schema: turn.output_schema, metadata: turn.metadata });
  const parts = await resolveInput(parsed, c.env.ENVIRONMENT);
  const { plan } = await idempotentPlan(c, idempotencyBody, { session_id: turn.session_id ?? newId("ses"), run_id: newId("run") }, turnPlan);
  // Media are written to R2 only now, every check passed, and deleted again if the session refuses the turn.
  return startWithMedia(c.env, { tenant, ...plan }, parts, (input) =>
    callSession(c.env, tenant, plan.session_id, (stub) =>
      stub.startRun({
        tenant,
        session_id: plan.session_id,
        run_id: plan.run_id,
        agent,
        input,
        output_schema: turn.output_schema,
        metadata: turn.metadata,
        stream: turn.stream,
        background: turn.background,
      }),
    ),
  );
}
