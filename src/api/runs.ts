import { runSettingFields, type RunSettings } from "../agents";
import { createRoute, z } from "@hono/zod-openapi";
import { CLIENT_ID, newId } from "../core/ids";
import { listRuns, ownedRun } from "../db/runs";
import { mediaContext, parseInput, resolveInput } from "../media";
import { renderRun, type RunAnswer } from "../session";
import { idempotentPlan, idempotencyKeyHeaders } from "./idempotency";
import { runOutputSchema } from "./run-output-schema";
import { decodeCursor, listQuery, listSchema, page } from "./pagination";
import { authErrors, bodyErrors, errorResponses } from "./responses";
import { bearerSecurity, newRouter } from "./router";
import { continueRunBody, createRunBody, eventStreamContent, runSchema, runStatusSchema } from "./run-schemas";
import { startWithMedia } from "./run-input";
import { startTurn } from "./start-turn";
import { currentRun } from "./current-run";
import { runnableAgent } from "./runnable-agent";
import { assertRunRecordFits, assertStorable } from "./stored-limits";
import { callSession, unwrap } from "../session/client";

/** The run's own settings of a create body: every field of `runSettingFields`. */
function runSettingsOf(body: z.output<typeof createRunBody>): RunSettings {
  return Object.fromEntries(Object.keys(runSettingFields).map((key) => [key, body[key as keyof typeof body]])) as RunSettings;
}

/** How long a replayed continue waits for the run to stop before answering its state. */
const REPLAY_WAIT_MS = 10 * 60 * 1000;

const agentParams = z.object({ agent_id: z.string().regex(CLIENT_ID, "not a valid agent id") });
const runParams = agentParams.extend({ run_id: z.string().regex(CLIENT_ID, "not a valid run id") });
const errors = { 400: errorResponses[400], 404: errorResponses[404], ...authErrors };
/** The errors of the routes that start a run: a body, and a busy session or a run that cannot continue. */
const startErrors = {
  ...errors,
  ...bodyErrors,
  409: { ...errorResponses[409], description: "Session busy, run not continuable, or an Idempotency-Key reused with another body" },
};
const runOrStream = {
  description: "The Run once it has stopped, or (stream: true) an SSE stream of its events",
  content: { "application/json": { schema: runSchema }, ...eventStreamContent },
};

/**
 * The answer of a started or continued run: its SSE stream, `202` for a background run, or
 * the Run once it has stopped.
 */
function respond(answer: RunAnswer, body: { background: boolean; stream: boolean }): Response {
  const { run, stream } = unwrap(answer);
  // A steer is answered at once, whatever the request asked: the run it joined, and where it went.
  if (answer.ok && answer.steer) return Response.json({ run_id: run.id, ...answer.steer }, { status: 202 });
  if (body.background && !body.stream) {
    return Response.json({ run_id: run.id, session_id: run.session_id, status: run.status }, { status: 202 });
  }
  if (stream) {
    return new Response(stream, {
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache", "x-accel-buffering": "no" },
    });
  }
  return Response.json(run, { status: 200 });
}

const createRun = createRoute({
  operationId: "createRun",
  method: "post",
  path: "/agents/{agent_id}/runs",
  tags: ["runs"],
  summary: "Run one turn of an agent",
  security: bearerSecurity,
  request: {
    headers: idempotencyKeyHeaders,
    params: agentParams,
    body: { required: true, content: { "application/json": { schema: createRunBody } } },
  },
  responses: {
    200: runOrStream,
    202: {
      description:
        "background: true — accepted, executed from the queue (`pending`, or `queued` behind a busy session's run); a retry with the same Idempotency-Key answers 202 again with the run's current status. `on_busy: \"steer\"` on a busy session: the input joined the active run (`run_id`), `steered_into` is that run or the queued run the steer became",
      content: {
        "application/json": {
          schema: z.union([
            z.object({ run_id: z.string(), session_id: z.string(), status: runStatusSchema }),
            z.object({ run_id: z.string(), steer_id: z.string(), steered_into: z.string() }),
          ]),
        },
      },
    },
    ...startErrors,
  },
});

const getRun = createRoute({
  operationId: "getRun",
  summary: "Read a run, optionally waiting for it to stop",
  method: "get",
  path: "/agents/{agent_id}/runs/{run_id}",
  tags: ["runs"],
  security: bearerSecurity,
  request: {
    params: runParams,
    query: z.strictObject({
      wait: z.coerce
        .number()
        .min(0)
        .max(60)
        .optional()
        .openapi({ description: "Long-poll: seconds to wait for the run to stop (at most 60)" }),
    }),
  },
  responses: { 200: { description: "The run", content: { "application/json": { schema: runSchema } } }, ...errors },
});

const listRunsRoute = createRoute({
  operationId: "listRuns",
  summary: "List an agent's runs, newest first",
  method: "get",
  path: "/agents/{agent_id}/runs",
  tags: ["runs"],
  security: bearerSecurity,
  request: {
    params: agentParams,
    query: listQuery({
      session_id: z.string().optional(),
      status: z.enum(["pending", "running", "paused", "completed", "cancelled", "error"]).optional(),
    }),
  },
  responses: { 200: { description: "Runs, newest first", content: { "application/json": { schema: listSchema(runSchema) } } }, ...errors },
});

const cancelRun = createRoute({
  operationId: "cancelRun",
  summary: "Cancel a run",
  method: "post",
  path: "/agents/{agent_id}/runs/{run_id}/cancel",
  tags: ["runs"],
  security: bearerSecurity,
  request: { params: runParams },
  responses: {
    200: { description: "The run, cancelled or as it had already ended", content: { "application/json": { schema: runSchema } } },
    ...errors,
  },
});

const continueRun = createRoute({
  operationId: "continueRun",
  method: "post",
  path: "/agents/{agent_id}/runs/{run_id}/continue",
  tags: ["runs"],
  summary: "Resume a paused run with tool results, or branch a finished run from a checkpoint or its last user message",
  security: bearerSecurity,
  request: { params: runParams, body: { required: true, content: { "application/json": { schema: continueRunBody } } } },
  responses: { 200: runOrStream, ...startErrors },
});

const checkpointSchema = z
  .object({
    id: z.string(),
    run_id: z.string(),
    step: z.number().int(),
    after: z.enum(["tool_result", "end"]),
    tool_call_id: z.string().nullable(),
    tool_name: z.string().nullable(),
    message_index: z.number().int(),
    created_at: z.string(),
  })
  .openapi("Checkpoint");

const checkpointsRoute = createRoute({
  operationId: "listCheckpoints",
  method: "get",
  path: "/agents/{agent_id}/runs/{run_id}/checkpoints",
  tags: ["runs"],
  summary: "The run's checkpoints: after each tool step, and at its end",
  security: bearerSecurity,
  request: { params: runParams },
  responses: {
    200: {
      description: "Checkpoints in order",
      content: { "application/json": { schema: z.object({ data: z.array(checkpointSchema) }) } },
    },
    ...errors,
  },
});

export const runRoutes = newRouter()
  .openapi(createRun, async (c) => {
    const { agent_id } = c.req.valid("param");
    const body = c.req.valid("json");
    assertStorable(body);
    const answer = await startTurn(c, body, {
      agent_id,
      input: body.input,
      session_id: body.session_id,
      output_schema: runOutputSchema(body.output_schema),
      metadata: body.metadata,
      stream: body.stream,
      background: body.background,
      settings: runSettingsOf(body),
      ...(body.on_busy ? { on_busy: body.on_busy } : {}),
      ...(body.user || body.prompt_cache_key
        ? {
            caller: {
              ...(body.user ? { end_user: body.user } : {}),
              ...(body.prompt_cache_key ? { prompt_cache_key: body.prompt_cache_key } : {}),
            },
          }
        : {}),
    });
    return respond(answer, body);
  })
  .openapi(getRun, async (c) => {
    const { agent_id, run_id } = c.req.valid("param");
    const { wait } = c.req.valid("query");
    const tenant = c.get("tenant");
    const stored = await ownedRun(c.env.DB, tenant, agent_id, run_id);
    return c.json(await currentRun(c.env, tenant, stored, (wait ?? 0) * 1000), 200);
  })
  .openapi(listRunsRoute, async (c) => {
    const { agent_id } = c.req.valid("param");
    const query = c.req.valid("query");
    const rows = await listRuns(
      c.env.DB,
      c.get("tenant"),
      { agentId: agent_id, sessionId: query.session_id, status: query.status },
      decodeCursor(query.cursor),
      query.limit,
    );
    return c.json(
      page(rows, query.limit, (r) => renderRun(r.run)),
      200,
    );
  })
  .openapi(cancelRun, async (c) => {
    const { agent_id, run_id } = c.req.valid("param");
    const tenant = c.get("tenant");
    const stored = await ownedRun(c.env.DB, tenant, agent_id, run_id);
    const result = await callSession(
      c.env,
      tenant,
      stored.session_id,
      (stub) => stub.cancelRun({ tenant, session_id: stored.session_id }, run_id),
      { idempotent: true },
    );
    return c.json(unwrap(result).run, 200);
  })
  .openapi(continueRun, async (c) => {
    const { agent_id, run_id } = c.req.valid("param");
    const body = c.req.valid("json");
    assertStorable(body);
    const tenant = c.get("tenant");
    const stored = await ownedRun(c.env.DB, tenant, agent_id, run_id);
    const agent = await runnableAgent(c.env, tenant, agent_id);
    // A branch's input is checked and its media stored exactly as a turn's.
    const parsed = body.input === undefined ? null : parseInput(body.input, mediaContext(c.env));
    // A branch stores its agent, input and metadata as a turn does (its output schema is the source run's).
    assertRunRecordFits({ agent, input: parsed ?? [], output_schema: null, metadata: body.metadata });
    const parts = parsed === null ? null : await resolveInput(parsed, mediaContext(c.env));
    const identity = { tenant, session_id: stored.session_id };
    const { plan, replay } = await idempotentPlan(c, body, { run_id: newId("run") }, z.object({ run_id: z.string() }));
    // Only a paused run takes tool_results, and only in place: a retried branch is asked for again
    // (the object answers the branch it recorded, or creates it if the first attempt never did).
    if (replay && (body.tool_results.length > 0 || body.approvals.length > 0)) {
      const source = unwrap(
        await callSession(c.env, tenant, stored.session_id, (stub) => stub.getRun(identity, run_id), { idempotent: true }),
      ).run;
      const answers = new Set([...body.tool_results, ...body.approvals].map((r) => r.tool_call_id));
      const untouched = source.status === "paused" && source.required_actions.every((a) => answers.has(a.tool_call_id));
      if (!untouched) {
        // The first request continued the paused run in place: answer it as it stops, as the first answer did.
        const result = await callSession(c.env, tenant, stored.session_id, (stub) => stub.waitForRun(identity, run_id, REPLAY_WAIT_MS), {
          idempotent: true,
        });
        return c.json(unwrap(result).run, 200);
      }
    }
    const answer = await startWithMedia(c.env, { ...identity, run_id: plan.run_id }, parts ?? [], (input) =>
      callSession(c.env, tenant, stored.session_id, (stub) =>
        stub.continueRun({
          ...identity,
          run_id,
          tool_results: body.tool_results,
          approvals: body.approvals,
          key_id: c.get("tokenId"),
          stream: body.stream,
          continue_from: body.continue_from,
          fork: body.fork,
          input: parts ? input : null,
          background: body.background,
          metadata: body.metadata,
          agent,
          new_run_id: plan.run_id,
        }),
      ),
    );
    return respond(answer, body);
  })
  .openapi(checkpointsRoute, async (c) => {
    const { agent_id, run_id } = c.req.valid("param");
    const tenant = c.get("tenant");
    const stored = await ownedRun(c.env.DB, tenant, agent_id, run_id);
    const result = await callSession(
      c.env,
      tenant,
      stored.session_id,
      (stub) => stub.getCheckpoints({ tenant, session_id: stored.session_id }, run_id),
      { idempotent: true },
    );
    return c.json({ data: unwrap(result).checkpoints }, 200);
  });
