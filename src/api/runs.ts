import { createRoute, z } from "@hono/zod-openapi";
import { CLIENT_ID, newId } from "../core/ids";
import { findAgent } from "../db/agents";
import { findRun, listRuns } from "../db/runs";
import { isActive, renderRun, type InputPart } from "../session/run-record";
import type { RunAnswer } from "../session/protocol";
import { ApiError, notFound, notSupportedYet } from "./errors";
import { idempotentPlan } from "./idempotency";
import { decodeCursor, listSchema, page, pageQuery } from "./pagination";
import { authErrors, errorResponses, notBuiltResponse } from "./responses";
import { bearerSecurity, newRouter } from "./router";
import { continueRunBody, createRunBody, runSchema } from "./run-schemas";
import { callSession, unwrap } from "./session-client";

/** A run's text input is capped so that its transcript row stays well under D1's 2 MB row limit. */
const MAX_INPUT_CHARS = 1_000_000;

/** How long a replayed continue waits for the run to stop before answering its state. */
const REPLAY_WAIT_MS = 10 * 60 * 1000;

const runPlan = z.object({ session_id: z.string(), run_id: z.string() });

const agentParams = z.object({ agent_id: z.string().regex(CLIENT_ID, "not a valid agent id") });
const runParams = agentParams.extend({ run_id: z.string().regex(CLIENT_ID, "not a valid run id") });
const errors = { 400: errorResponses[400], 404: errorResponses[404], ...authErrors, 409: { ...errorResponses[409], description: "Session busy, or run not continuable" } };
const runOrStream = {
  description: "The Run once it has stopped, or (stream: true) an SSE stream of its events",
  content: { "application/json": { schema: runSchema }, "text/event-stream": { schema: z.string() } },
};

function normalizeInput(input: z.infer<typeof createRunBody>["input"]): InputPart[] {
  const parts = typeof input === "string" ? [{ type: "text" as const, text: input }] : input;
  const text: InputPart[] = [];
  for (const [i, part] of parts.entries()) {
    if (part.type !== "text" || typeof part.text !== "string") throw notSupportedYet(`input.${i}`, `${String(part.type)} content parts`);
    text.push({ type: "text", text: part.text });
  }
  if (text.reduce((n, p) => n + p.text.length, 0) > MAX_INPUT_CHARS) {
    throw new ApiError("payload_too_large", `A run's text input is limited to ${MAX_INPUT_CHARS} characters`);
  }
  return text;
}

function respond(answer: RunAnswer): Response {
  const { run, stream } = unwrap(answer);
  if (stream) {
    return new Response(stream, {
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache", "x-accel-buffering": "no" },
    });
  }
  return Response.json(run, { status: 200 });
}

const createRun = createRoute({
  method: "post",
  path: "/agents/{agent_id}/runs",
  tags: ["runs"],
  summary: "Run one turn of an agent",
  security: bearerSecurity,
  request: { params: agentParams, body: { required: true, content: { "application/json": { schema: createRunBody } } } },
  responses: {
    200: runOrStream,
    202: {
      description: "background: true — accepted, executed from the queue",
      content: { "application/json": { schema: z.object({ run_id: z.string(), session_id: z.string(), status: z.literal("pending") }) } },
    },
    ...errors,
  },
});

const getRun = createRoute({
  method: "get",
  path: "/agents/{agent_id}/runs/{run_id}",
  tags: ["runs"],
  security: bearerSecurity,
  request: {
    params: runParams,
    query: z.strictObject({
      wait: z.coerce.number().min(0).max(60).optional().openapi({ description: "Long-poll: seconds to wait for the run to stop (at most 60)" }),
    }),
  },
  responses: { 200: { description: "The run", content: { "application/json": { schema: runSchema } } }, ...errors },
});

const listRunsRoute = createRoute({
  method: "get",
  path: "/agents/{agent_id}/runs",
  tags: ["runs"],
  security: bearerSecurity,
  request: {
    params: agentParams,
    query: z.strictObject({
      ...pageQuery,
      session_id: z.string().optional(),
      status: z.enum(["pending", "running", "paused", "completed", "cancelled", "error"]).optional(),
    }),
  },
  responses: { 200: { description: "Runs, newest first", content: { "application/json": { schema: listSchema(runSchema) } } }, ...errors },
});

const cancelRun = createRoute({
  method: "post",
  path: "/agents/{agent_id}/runs/{run_id}/cancel",
  tags: ["runs"],
  security: bearerSecurity,
  request: { params: runParams },
  responses: { 200: { description: "The run, cancelled or as it had already ended", content: { "application/json": { schema: runSchema } } }, ...errors },
});

const continueRun = createRoute({
  method: "post",
  path: "/agents/{agent_id}/runs/{run_id}/continue",
  tags: ["runs"],
  summary: "Resume a paused run with the client's tool results",
  security: bearerSecurity,
  request: { params: runParams, body: { required: true, content: { "application/json": { schema: continueRunBody } } } },
  responses: { 200: runOrStream, ...errors },
});

const notBuilt = (path: string, summary: string) =>
  createRoute({
    method: "get",
    path,
    tags: ["runs"],
    summary,
    security: bearerSecurity,
    request: { params: runParams },
    responses: { 501: notBuiltResponse, ...errors },
  });

export const runRoutes = newRouter()
  .openapi(createRun, async (c) => {
    const { agent_id } = c.req.valid("param");
    const body = c.req.valid("json");
    if (body.output_schema != null) throw notSupportedYet("output_schema");
    const input = normalizeInput(body.input);
    const tenant = c.get("tenant");
    const agent = await findAgent(c.env.DB, tenant, agent_id);
    if (!agent) throw notFound("Agent", agent_id);
    const { plan } = await idempotentPlan(c, body, { session_id: body.session_id ?? newId("ses"), run_id: newId("run") }, runPlan);
    const answer = await callSession(c.env, tenant, plan.session_id, (stub) =>
      stub.startRun({
        tenant,
        session_id: plan.session_id,
        run_id: plan.run_id,
        agent,
        input,
        metadata: body.metadata,
        stream: body.stream,
        background: body.background,
      }),
    );
    if (body.background && !body.stream) {
      const { run } = unwrap(answer);
      return c.json({ run_id: run.id, session_id: run.session_id, status: run.status }, 202);
    }
    return respond(answer);
  })
  .openapi(getRun, async (c) => {
    const { agent_id, run_id } = c.req.valid("param");
    const { wait } = c.req.valid("query");
    const tenant = c.get("tenant");
    const stored = await findRun(c.env.DB, tenant, agent_id, run_id);
    if (!stored) throw notFound("Run", run_id);
    if (!isActive(stored.status)) return c.json(renderRun(stored), 200);
    // The mirror may be a step behind a live run: the object has its current state.
    const identity = { tenant, session_id: stored.session_id };
    const live = await callSession(
      c.env,
      tenant,
      stored.session_id,
      (stub) => (wait ? stub.waitForRun(identity, run_id, wait * 1000) : stub.getRun(identity, run_id)),
      { idempotent: true },
    );
    return c.json(unwrap(live).run, 200);
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
    return c.json(page(rows, query.limit, (r) => renderRun(r.run)), 200);
  })
  .openapi(cancelRun, async (c) => {
    const { agent_id, run_id } = c.req.valid("param");
    const tenant = c.get("tenant");
    const stored = await findRun(c.env.DB, tenant, agent_id, run_id);
    if (!stored) throw notFound("Run", run_id);
    const result = await callSession(c.env, tenant, stored.session_id, (stub) =>
      stub.cancelRun({ tenant, session_id: stored.session_id }, run_id),
    { idempotent: true });
    return c.json(unwrap(result).run, 200);
  })
  .openapi(continueRun, async (c) => {
    const { agent_id, run_id } = c.req.valid("param");
    const body = c.req.valid("json");
    if (body.continue_from !== undefined && body.continue_from !== "end") throw notSupportedYet("continue_from");
    if (body.fork !== undefined) throw notSupportedYet("fork");
    if (body.input !== undefined) throw notSupportedYet("input", "A new input on continue");
    if (body.background) throw notSupportedYet("background");
    const tenant = c.get("tenant");
    const stored = await findRun(c.env.DB, tenant, agent_id, run_id);
    if (!stored) throw notFound("Run", run_id);
    const identity = { tenant, session_id: stored.session_id };
    const { replay } = await idempotentPlan(c, body, { run_id }, z.object({ run_id: z.string() }));
    if (replay) {
      // The first continue was taken: answer the run as it stops, as the first answer did.
      const result = await callSession(c.env, tenant, stored.session_id, (stub) => stub.waitForRun(identity, run_id, REPLAY_WAIT_MS), {
        idempotent: true,
      });
      return c.json(unwrap(result).run, 200);
    }
    const answer = await callSession(c.env, tenant, stored.session_id, (stub) =>
      stub.continueRun({ ...identity, run_id, tool_results: body.tool_results, stream: body.stream }),
    );
    return respond(answer);
  })
  .openapi(notBuilt("/agents/{agent_id}/runs/{run_id}/checkpoints", "Checkpoints of a run (not built yet)"), () => {
    throw new ApiError("not_implemented", "GET …/runs/{run_id}/checkpoints is not supported yet");
  });
