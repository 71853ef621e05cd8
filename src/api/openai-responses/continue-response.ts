import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { isDeepStrictEqual } from "../../core/deep-equal";
import type { RunEvent, RunRecord } from "../../session";
import { invalidFields } from "../errors";
import { idempotentPlan } from "../idempotency";
import type { AppEnv } from "../router";
import { runnableAgent } from "../runnable-agent";
import { callSession, unwrap } from "../../session/client";
import { responseOf, storedEventsOf, streamResponse, watchResponse } from "./answer";
import { callArguments, outputText, type ReadInput } from "./conversation";
import type { CreateResponseBody } from "./request";
import { runAgent } from "./run-agent";
import { runEventsOf } from "./stream";
import { storedSurface } from "./surface";

/** How long a replayed continuation waits for the run to stop before answering its state. */
const REPLAY_WAIT_MS = 10 * 60 * 1000;

/** The stretch (stream.ts) that answering the pause which asked for `callId` starts; null when no pause asked for it. */
function stretchAnswering(events: RunEvent[], callId: string): number | null {
  let pauses = 0;
  for (const event of events) {
    if (event.type !== "run_paused") continue;
    pauses += 1;
    const actions = Array.isArray(event.data.required_actions) ? (event.data.required_actions as { tool_call_id?: unknown }[]) : [];
    if (actions.some((action) => action.tool_call_id === callId)) return pauses;
  }
  return null;
}

async function* concat(stored: RunEvent[], live: AsyncIterable<RunEvent>): AsyncGenerator<RunEvent> {
  yield* stored;
  yield* live;
}

/**
 * The earlier items of a continuation repeat what the session holds (the client resends its whole
 * history): the `function_call` items of the calls being answered must be those calls, as the
 * run asked for them. Other items are the session's own history, and skipped.
 */
function checkResent(run: RunRecord, earlier: ReadInput["earlier"]): void {
  const asked = new Map(run.required_actions.map((action) => [action.tool_call_id, action]));
  for (const { item, index } of earlier) {
    if (item.type !== "function_call") continue;
    const action = asked.get(item.call_id);
    if (!action) continue;
    if (action.name !== item.name || !isDeepStrictEqual(callArguments(item.arguments, index), action.arguments ?? {})) {
      throw invalidFields([
        {
          path: `input.${index}`,
          message: `function_call ${item.call_id} is not the call that response ${run.id} made (name or arguments differ)`,
        },
      ]);
    }
  }
}

/**
 * A request whose input ends with `function_call_output` items answering the function calls of
 * a paused response (`paused`: found by `previous_response_id` or by the call ids): the run
 * continues in place with those results (its response id stays the run's). Streamed, it reads as
 * the stream of the run's next stretch, numbered on from the stretches before. A retry with the
 * same `Idempotency-Key` after the run went on answers that continuation again (it waits for the
 * run to stop, or streams that stretch) and continues nothing twice.
 */
export async function continueWithOutputs(
  c: Context<AppEnv>,
  body: CreateResponseBody,
  read: ReadInput,
  paused: RunRecord,
): Promise<Response> {
  if (paused.agent_id !== body.model)
    throw invalidFields([{ path: "model", message: `must be ${paused.agent_id}, the agent of the response these outputs answer` }]);
  checkResent(paused, read.earlier);
  const tenant = c.get("tenant");
  const agent = runAgent(await runnableAgent(c.env, tenant, body.model), body);
  const identity = { tenant, session_id: paused.session_id };
  const surface = storedSurface(paused);
  const { replay } = await idempotentPlan(c, body, { run_id: paused.id }, z.object({ run_id: z.string() }));
  const events = await storedEventsOf(c, paused);
  const stretch = stretchAnswering(events, read.outputs[0]?.item.call_id ?? "");
  const continued = stretch !== null && events.filter((event) => event.type === "run_continued").length >= stretch;
  if (replay && continued) {
    const run = unwrap(
      await callSession(c.env, tenant, paused.session_id, (stub) => stub.getRun(identity, paused.id), { idempotent: true }),
    ).run;
    if (body.stream) return watchResponse(c, run, surface, { stretch });
    const stopped = await callSession(c.env, tenant, paused.session_id, (stub) => stub.waitForRun(identity, paused.id, REPLAY_WAIT_MS), {
      idempotent: true,
    });
    return c.json(await responseOf(c, unwrap(stopped).run, surface), 200);
  }
  const answer = await callSession(c.env, tenant, paused.session_id, (stub) =>
    stub.continueRun({
      ...identity,
      run_id: paused.id,
      tool_results: read.outputs.map(({ item }) => ({ tool_call_id: item.call_id, output: outputText(item) })),
      stream: body.stream ?? false,
      input: null,
      background: false,
      metadata: body.metadata ?? {},
      agent,
    }),
  );
  const { run, stream } = unwrap(answer);
  if (stream) return streamResponse(c, run, surface, concat(events, runEventsOf(stream)), { stretch: stretch ?? 0 });
  return c.json(await responseOf(c, run, surface), 200);
}
