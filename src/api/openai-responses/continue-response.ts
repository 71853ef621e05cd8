import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { RunEvent } from "../../session";
import { invalidFields } from "../errors";
import { idempotentPlan } from "../idempotency";
import type { AppEnv } from "../router";
import { runnableAgent } from "../runnable-agent";
import { callSession, unwrap } from "../session-client";
import { responseOf, storedEventsOf, streamResponse, watchResponse } from "./answer";
import { ownedResponse } from "./deleted-responses";
import type { CreateResponseBody, FunctionCallOutput } from "./request";
import { runAgent } from "./run-agent";
import { runEventsOf } from "./stream";

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
 * A request whose input answers the function calls of `previous_response_id`: the paused run
 * continues in place with those results (its response id stays the run's). Streamed, it reads
 * as the stream of the run's next stretch, numbered on from the stretches before. A retry with
 * the same `Idempotency-Key` after the run went on answers that continuation again (it waits for
 * the run to stop, or streams that stretch) and continues nothing twice.
 */
export async function continueWithOutputs(c: Context<AppEnv>, body: CreateResponseBody, outputs: FunctionCallOutput[]): Promise<Response> {
  if (!body.previous_response_id) {
    throw invalidFields([{ path: "previous_response_id", message: "required with function_call_output items: the response whose calls they answer" }]);
  }
  if (body.conversation) throw invalidFields([{ path: "conversation", message: "give previous_response_id or conversation, not both" }]);
  if (typeof body.input !== "string" && body.input.some((item) => item.type !== "function_call_output")) {
    throw invalidFields([{ path: "input", message: "function_call_output items answer a paused response: send messages in the next request" }]);
  }
  const tenant = c.get("tenant");
  const stored = await ownedResponse(c.env.DB, tenant, body.previous_response_id);
  if (stored.agent_id !== body.model) throw invalidFields([{ path: "model", message: `must be ${stored.agent_id}, the agent of previous_response_id` }]);
  const agent = runAgent(await runnableAgent(c.env, tenant, body.model), body.instructions, body.tools);
  const identity = { tenant, session_id: stored.session_id };
  const { replay } = await idempotentPlan(c, body, { run_id: stored.id }, z.object({ run_id: z.string() }));
  const events = await storedEventsOf(c, stored);
  const stretch = stretchAnswering(events, outputs[0]?.call_id ?? "");
  const continued = stretch !== null && events.filter((event) => event.type === "run_continued").length >= stretch;
  if (replay && continued) {
    const run = unwrap(await callSession(c.env, tenant, stored.session_id, (stub) => stub.getRun(identity, stored.id), { idempotent: true })).run;
    if (body.stream) return watchResponse(c, run, { stretch });
    const stopped = await callSession(c.env, tenant, stored.session_id, (stub) => stub.waitForRun(identity, stored.id, REPLAY_WAIT_MS), { idempotent: true });
    return c.json(await responseOf(c, unwrap(stopped).run), 200);
  }
  const answer = await callSession(c.env, tenant, stored.session_id, (stub) =>
    stub.continueRun({
      ...identity,
      run_id: stored.id,
      tool_results: outputs.map((output) => ({ tool_call_id: output.call_id, output: output.output })),
      stream: body.stream ?? false,
      input: null,
      background: false,
      metadata: body.metadata ?? {},
      agent,
    }),
  );
  const { run, stream } = unwrap(answer);
  if (stream) return streamResponse(c, run, concat(events, runEventsOf(stream)), { stretch: stretch ?? 0 });
  return c.json(await responseOf(c, run), 200);
}
