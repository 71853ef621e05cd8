import type { Context } from "hono";
import type { Run, RunEvent } from "../../session";
import { SSE_HEADERS } from "../events";
import type { AppEnv } from "../router";
import { callSession, unwrap } from "../../session/client";
import { renderResponse } from "./render";
import { responsesEventsOf, responsesSse, runEventsOf } from "./stream";
import type { ResponseSurface } from "./surface";
import { serverToolItems } from "./tool-items";

const identityOf = (c: Context<AppEnv>, run: Pick<Run, "session_id">) => ({ tenant: c.get("tenant"), session_id: run.session_id });

/** Every stored event of a run (all its stretches), from its session object. */
export async function storedEventsOf(c: Context<AppEnv>, run: Pick<Run, "id" | "session_id">): Promise<RunEvent[]> {
  const identity = identityOf(c, run);
  return unwrap(
    await callSession(c.env, identity.tenant, run.session_id, (stub) => stub.readEvents(identity, run.id, 0), { idempotent: true }),
  ).events;
}

/** A run as its Response object, with the agent's own tool calls of its current stretch as output items. */
export async function responseOf(c: Context<AppEnv>, run: Run, surface: ResponseSurface) {
  if (run.status === "pending") return renderResponse(run, surface);
  const { items, answerId, pausedAt } = serverToolItems(await storedEventsOf(c, run));
  return renderResponse(run, surface, items, answerId, pausedAt);
}

/** The run's events (from its first, as Agentry's SSE frames) as the Responses stream, from `from` on (stream.ts). */
export function streamResponse(
  c: Context<AppEnv>,
  run: Run,
  surface: ResponseSurface,
  events: ReadableStream<Uint8Array> | AsyncIterable<RunEvent>,
  from: { startingAfter?: number; stretch?: number } = {},
): Response {
  const identity = identityOf(c, run);
  const finalRun = async () =>
    unwrap(await callSession(c.env, identity.tenant, run.session_id, (stub) => stub.getRun(identity, run.id), { idempotent: true })).run;
  const runEvents = events instanceof ReadableStream ? runEventsOf(events) : events;
  return new Response(responsesSse(responsesEventsOf(runEvents, run, surface, finalRun), from), { headers: SSE_HEADERS });
}

/** A run's whole event stream (stored, then live until its current stretch ends) as the Responses stream from `from`. */
export async function watchResponse(
  c: Context<AppEnv>,
  run: Run,
  surface: ResponseSurface,
  from: { startingAfter?: number; stretch?: number },
): Promise<Response> {
  const identity = identityOf(c, run);
  const watched = unwrap(
    await callSession(c.env, identity.tenant, run.session_id, (stub) => stub.watchEvents(identity, run.id, 0), { idempotent: true }),
  );
  return streamResponse(c, run, surface, watched.stream, from);
}
