import type { Context } from "hono";
import {
  outputSchemaProblems,
  settingsProblems,
  withRunSettings,
  type Agent,
  type ObjectJsonSchema,
  type OnBusy,
  type RunSettings,
} from "../agents";
import { invalidFields } from "./errors";
import { newId } from "../core/ids";
import { checkBroughtHistory, seededHistory, type BroughtMessage } from "./brought-history";
import { mediaContext, parseInput, resolveInput, type ContentPart } from "../media";
import type { RunAnswer, RunCaller } from "../session";
import { z } from "@hono/zod-openapi";
import { idempotentPlan } from "./idempotency";
import type { AppEnv } from "./router";
import { startWithMedia } from "./run-input";
import { assertRunRecordFits } from "./stored-limits";
import { runnableAgent } from "./runnable-agent";
import { callSession, failureToError } from "../session/client";
import { ledgerOf, stopDetails } from "../budgets";

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
  /** The run's own settings over the agent's (docs/agents.md, "Model settings"). */
  settings?: RunSettings;
  /** Changes the agent for this run only (its tools, say); the stored agent is untouched. */
  adapt?: (agent: Agent) => Agent;
  /** The end user and prompt cache key the provider gets (protocol.ts). */
  caller?: RunCaller;
  /** A new session's conversation so far, as the client brought it (brought-history.ts). */
  history?: BroughtMessage[];
  /** What the turn does when the session is busy; absent: the agent's (docs/runs.md, Busy sessions). */
  on_busy?: OnBusy;
  /**
   * A surface whose answer must be a run of its own (`/v1/responses`): the agent's `on_busy` is
   * sent as it is now, its `steer` as this instead.
   */
  steerAs?: Exclude<OnBusy, "steer">;
  /** What the surface answers about the run, from the agent as the run uses it; kept with the run. */
  surface?: (agent: Agent) => Record<string, unknown>;
};

/** The agent as the turn's run uses it: adapted, its settings overridden, and checked against its provider's rules. */
export function turnAgent(found: Agent, turn: Pick<Turn, "settings" | "adapt" | "output_schema">): Agent {
  const adapted = turn.adapt ? turn.adapt(found) : found;
  const agent = turn.settings ? withRunSettings(adapted, turn.settings) : adapted;
  const problems = [...settingsProblems(agent), ...outputSchemaProblems(agent.provider, turn.output_schema)];
  if (problems.length > 0) throw invalidFields(problems, problems.map((p) => `${p.path}: ${p.message}`).join("; "));
  return agent;
}

/**
 * Starts a turn: checks its input, finds the runnable agent, plans the ids (replayed for a
 * repeated `Idempotency-Key` with the same `idempotencyBody`), stores its media and asks the
 * session. The caller checks its own body's limits first and renders the answer.
 */
export async function startTurn(c: Context<AppEnv>, idempotencyBody: unknown, turn: Turn): Promise<RunAnswer> {
  const parsed = parseInput(turn.input, mediaContext(c.env));
  const tenant = c.get("tenant");
  const keyed = c.req.header("idempotency-key") !== undefined;
  const agentLookup = runnableAgent(c.env, tenant, turn.agent_id);
  // Awaited below, unless the session refuses first: then its failure (a 404) is not the answer.
  agentLookup.catch(() => {});
  if (!keyed) await refuseEarly(c, turn);
  // The tenant's ledger is asked beside the agent's read (docs/budgets.md), once a busy session's
  // 409 is ruled out. Not for an `Idempotency-Key` request: its retry may be a run already made; the session asks then.
  const budgets = keyed ? null : ledgerOf(c.env, tenant).settle([], { agent_id: turn.agent_id, session_id: turn.session_id ?? null });
  budgets?.catch(() => {});
  const agent = turnAgent(await agentLookup, turn);
  const verdict = budgets ? await budgets.catch(() => null) : null;
  if (verdict && !verdict.ok) throw failureToError({ type: "budget_exceeded", message: verdict.message, details: stopDetails(verdict) });
  const surface = turn.surface ? turn.surface(agent) : undefined;
  const onBusy = turn.on_busy ?? (turn.steerAs ? (agent.on_busy === "steer" ? turn.steerAs : agent.on_busy) : undefined);
  assertRunRecordFits({ agent, input: parsed, output_schema: turn.output_schema, metadata: turn.metadata, surface });
  const parts = await resolveInput(parsed, mediaContext(c.env));
  const historyMedia = turn.history ? await checkBroughtHistory(turn.history, mediaContext(c.env)) : [];
  const { plan } = await idempotentPlan(
    c,
    idempotencyBody,
    { session_id: turn.session_id ?? newId("ses"), run_id: newId("run") },
    turnPlan,
  );
  // Stored even for a retried request (its first may never have reached the session); released
  // again when the session answers with the run the first request made.
  const seeded = historyMedia;
  // Media are written to R2 only now, every check passed, and deleted again if the session refuses the turn.
  return startWithMedia(
    c.env,
    { tenant, ...plan },
    [...seeded, ...parts],
    (staged) => {
      const input = staged.slice(seeded.length);
      const history = turn.history ? seededHistory(turn.history, staged.slice(0, seeded.length)) : undefined;
      return callSession(c.env, tenant, plan.session_id, (stub) =>
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
          new_session: turn.session_id === undefined && !keyed,
          ...(verdict?.ok ? { budget_checked: { watched: verdict.watched } } : {}),
          ...(onBusy ? { on_busy: onBusy } : {}),
          ...(history ? { history } : {}),
          ...(turn.caller ? { caller: turn.caller } : {}),
          ...(surface ? { surface } : {}),
        }),
      );
    },
    seeded.length,
  );
}

/**
 * A second turn on a busy session is refused by its object alone (docs/api.md: `409 session_busy`),
 * asked beside the agent's D1 read instead of after it. Not for a new session (never busy) nor
 * for an `Idempotency-Key` request (its retry may be the session's running turn; the caller
 * skips those): `startRun` decides them, and every case the object has no early answer for.
 */
async function refuseEarly(c: Context<AppEnv>, turn: Turn): Promise<void> {
  const sessionId = turn.session_id;
  if (sessionId === undefined) return;
  const tenant = c.get("tenant");
  // Only a shortcut: an object that cannot answer now leaves the decision to `startRun`.
  const refusal = await callSession(
    c.env,
    tenant,
    sessionId,
    (stub) => stub.turnRefusal({ tenant, session_id: sessionId }, turn.agent_id, turn.on_busy),
    {
      idempotent: true,
    },
  ).catch(() => null);
  if (refusal) throw failureToError(refusal.error);
}
