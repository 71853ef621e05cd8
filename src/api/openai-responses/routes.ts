import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { CLIENT_ID } from "../../core/ids";
import { isUnfinished, renderRun } from "../../session";
import { currentRun } from "../current-run";
import { ApiError, invalidFields } from "../errors";
import { runOutputSchema } from "../run-output-schema";
import { authErrors, errorResponses } from "../responses";
import { bearerSecurity, newRouter, type AppEnv } from "../router";
import { runInput } from "../run-schemas";
import { callSession, unwrap } from "../../session/client";
import { startTurn } from "../start-turn";
import { assertStorable } from "../stored-limits";
import { openAiErrorSchema } from "./error-schema";
import { responseOf, streamResponse, watchResponse } from "./answer";
import { continueWithOutputs } from "./continue-response";
import { markResponseDeleted, ownedResponse } from "./deleted-responses";
import { renderInputItems } from "./render";
import { historyOf, outputText, readInput, type ReadInput } from "./conversation";
import { resolveReferences } from "./references";
import { createResponseBody, type CreateResponseBody } from "./request";
import { responseRunSettings, runAgent } from "./run-agent";
import { storedSurface, surfaceOf, type ResponseSurface } from "./surface";
import { pausedRunWaitingFor } from "../../db/runs";
import { runnableAgent } from "../runnable-agent";
import { priorResult } from "../idempotency";
import { sha256Hex } from "../../core/hash";
import type { RunCaller } from "../../session";

const responseSchema = z
  .object({
    id: z.string(),
    object: z.literal("response"),
    created_at: z.number(),
    status: z.enum(["queued", "in_progress", "completed", "cancelled", "failed", "incomplete"]),
    model: z.string(),
    output: z.array(z.record(z.string(), z.unknown())),
    usage: z.record(z.string(), z.unknown()),
  })
  .openapi("OpenAIResponse", { description: "OpenAI's Response object; every field in docs/responses-api.md" });

const openAiError = (description: string) => ({ description, content: { "application/json": { schema: openAiErrorSchema } } });
/** The errors of every route of this surface, in OpenAI's shape. */
const errors = {
  400: openAiError("A field Agentry refuses or does not serve; error.param names it"),
  404: openAiError("Unknown agent (model), response or conversation"),
  401: openAiError(authErrors[401].description),
  429: { ...openAiError(authErrors[429].description), headers: authErrors[429].headers },
  500: openAiError(authErrors[500].description),
};
/** A request that starts or changes a run: also a busy session, and a body over 25 MB (refused before routing, in Agentry's shape). */
const writeErrors = {
  ...errors,
  409: openAiError("The session's turn is active (x-should-retry: false)"),
  413: errorResponses[413],
};
const responseParams = z.object({ response_id: z.string().regex(CLIENT_ID, "not a valid response id") });

const createResponse = createRoute({
  method: "post",
  path: "/responses",
  operationId: "createResponse",
  tags: ["openai-responses"],
  summary: "OpenAI Responses: run one turn of the agent named by `model`",
  security: bearerSecurity,
  request: { body: { required: true, content: { "application/json": { schema: createResponseBody } } } },
  responses: {
    200: {
      description: "The response once its run has stopped, or (stream: true) its stream events",
      content: { "application/json": { schema: responseSchema }, "text/event-stream": { schema: z.string() } },
    },
    ...writeErrors,
  },
});

const getResponse = createRoute({
  method: "get",
  path: "/responses/{response_id}",
  operationId: "getResponse",
  tags: ["openai-responses"],
  summary: "OpenAI Responses: a response (its run) as it is now",
  security: bearerSecurity,
  request: {
    params: responseParams,
    query: z.strictObject({
      stream: z
        .enum(["true", "false"])
        .optional()
        .openapi({ description: "true: the response's stream events, from the start or after starting_after" }),
      starting_after: z.coerce
        .number()
        .int()
        .min(0)
        .optional()
        .openapi({ description: "With stream=true: the sequence_number after which to resume" }),
    }),
  },
  responses: {
    200: {
      description: "The response, or (stream=true) its stream events",
      content: { "application/json": { schema: responseSchema }, "text/event-stream": { schema: z.string() } },
    },
    ...errors,
  },
});

const cancelResponse = createRoute({
  method: "post",
  path: "/responses/{response_id}/cancel",
  operationId: "cancelResponse",
  tags: ["openai-responses"],
  summary: "OpenAI Responses: cancel a response (its run), queued or in progress; idempotent",
  security: bearerSecurity,
  request: { params: responseParams },
  responses: {
    200: { description: "The response, cancelled or as it had already ended", content: { "application/json": { schema: responseSchema } } },
    ...errors,
  },
});

const inputItemsRoute = createRoute({
  method: "get",
  path: "/responses/{response_id}/input_items",
  operationId: "listResponseInputItems",
  tags: ["openai-responses"],
  summary: "OpenAI Responses: the input of a response (its run's input) as a list of one user message",
  security: bearerSecurity,
  request: { params: responseParams, query: z.strictObject({}) },
  responses: {
    200: {
      description: "The input items",
      content: {
        "application/json": {
          schema: z.object({
            object: z.literal("list"),
            data: z.array(z.record(z.string(), z.unknown())),
            first_id: z.string(),
            last_id: z.string(),
            has_more: z.boolean(),
          }),
        },
      },
    },
    ...errors,
  },
});

const deleteResponse = createRoute({
  method: "delete",
  path: "/responses/{response_id}",
  operationId: "deleteResponse",
  tags: ["openai-responses"],
  summary: "OpenAI Responses: delete a stopped response (hidden from /v1/responses; its run and the session's transcript stay)",
  security: bearerSecurity,
  request: { params: responseParams },
  responses: {
    200: {
      description: "The response is deleted",
      content: { "application/json": { schema: z.object({ id: z.string(), object: z.literal("response"), deleted: z.literal(true) }) } },
    },
    ...errors,
    409: openAiError("The response is queued, in progress or waits for its function call outputs (x-should-retry: false): cancel it first"),
  },
});

/** `text.format` as the run's output schema, checked as `output_schema` is on the runs route; JSON mode is any object. */
function outputSchemaOf(body: CreateResponseBody) {
  const format = body.text?.format;
  if (format?.type === "json_object") return { type: "object" as const };
  if (format?.type !== "json_schema") return null;
  try {
    return runOutputSchema(format.schema);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    throw invalidFields([{ path: "text.format.schema", message: error.message.replace(/^output_schema: /, "") }]);
  }
}

/** The `conversation` a request names (`"id"` or `{ id }`), if any. */
const conversationIdOf = (body: CreateResponseBody) => (typeof body.conversation === "string" ? body.conversation : body.conversation?.id);

/** The session a request continues: that of `previous_response_id`, or the `conversation`; absent: a new one. */
async function sessionOf(c: Context<AppEnv>, body: CreateResponseBody): Promise<string | undefined> {
  if (body.previous_response_id && body.conversation) {
    throw invalidFields([{ path: "conversation", message: "give previous_response_id or conversation, not both" }]);
  }
  if (body.previous_response_id) return (await ownedResponse(c.env.DB, c.get("tenant"), body.previous_response_id)).session_id;
  const conversation = conversationIdOf(body);
  if (conversation !== undefined && !CLIENT_ID.test(conversation)) {
    throw invalidFields([{ path: "conversation", message: "not a valid conversation (session) id" }]);
  }
  return conversation;
}

/**
 * The paused response that a request's `function_call_output` items answer: `previous_response_id`,
 * else the tenant's paused run waiting for the first call (a client that resends its history);
 * null when none waits for it.
 */
async function pausedResponseOf(c: Context<AppEnv>, body: CreateResponseBody, read: ReadInput) {
  const tenant = c.get("tenant");
  // Named, the response is answered whatever its state: a retry after it went on is a replay (continue-response.ts).
  if (body.previous_response_id) return ownedResponse(c.env.DB, tenant, body.previous_response_id);
  const first = read.outputs[0] as ReadInput["outputs"][number];
  const waiting = await pausedRunWaitingFor(c.env.DB, tenant, body.model, first.item.call_id);
  const prior = waiting ? null : continuedRunOf(await priorResult(c, body));
  const run = waiting ?? (prior ? await ownedResponse(c.env.DB, tenant, prior) : null);
  const conversation = conversationIdOf(body);
  if (run && (conversation === undefined || conversation === run.session_id)) return run;
  await refuseAnsweredCalls(c, read);
  if (!body.previous_response_id && !conversation) return null;
  const waits = run?.status === "paused" ? "waits for other calls" : "waits for no function call outputs";
  throw invalidFields([{ path: `input.${first.index}.call_id`, message: `answers no call of a paused response: the response ${waits}` }]);
}

/** OpenAI's `safety_identifier` and Agentry's end user id are at most 64 characters. */
const MAX_END_USER = 64;

/**
 * The request's end user (`safety_identifier`, else the older `user`, hashed when longer than a
 * provider takes, as OpenAI advises for user ids) and prompt cache key, for the provider.
 */
async function callerOf(body: CreateResponseBody): Promise<RunCaller | undefined> {
  const user = body.user ?? undefined;
  const end_user = body.safety_identifier ?? (user !== undefined && user.length > MAX_END_USER ? await sha256Hex(user) : user);
  const prompt_cache_key = body.prompt_cache_key ?? undefined;
  if (end_user === undefined && prompt_cache_key === undefined) return undefined;
  return { ...(end_user !== undefined ? { end_user } : {}), ...(prompt_cache_key !== undefined ? { prompt_cache_key } : {}) };
}

/** Agentry's function_call item id: `fc_<run id>_<call id>` (tool-items.ts). */
const FUNCTION_CALL_ID = /^fc_(run_[0-9a-z]+)_/;

/**
 * Outputs for calls of one of the caller's responses that no longer waits for them (answered
 * already, cancelled, ended) are refused, naming the output: seeding a new session with them
 * would run the turn again. Known by the resent `function_call` item's Agentry id.
 */
async function refuseAnsweredCalls(c: Context<AppEnv>, read: ReadInput): Promise<void> {
  for (const { item, index } of read.outputs) {
    const call = read.earlier.find((entry) => entry.item.type === "function_call" && entry.item.call_id === item.call_id)?.item;
    const runId = call?.type === "function_call" ? FUNCTION_CALL_ID.exec(call.id ?? "")?.[1] : undefined;
    if (runId === undefined) continue;
    const run = await ownedResponse(c.env.DB, c.get("tenant"), runId).catch(() => null);
    if (run && run.status !== "paused") {
      throw invalidFields([
        {
          path: `input.${index}.call_id`,
          message: `response ${run.id} no longer waits for this call (it is ${run.status}): send the next turn as a message`,
        },
      ]);
    }
  }
}

/** The run a first request with the same Idempotency-Key continued (its stored plan), or null. */
function continuedRunOf(prior: unknown): string | null {
  // A continuation stores only the run id; a new turn also its session (start-turn.ts).
  const parsed = z.strictObject({ run_id: z.string() }).safeParse(prior);
  return parsed.success ? parsed.data.run_id : null;
}

/** `/v1/responses`: OpenAI's Responses API over Agentry's runs and sessions (docs/responses-api.md). */
export const openAiResponseRoutes = newRouter()
  .openapi(createResponse, async (c) => {
    const body = c.req.valid("json");
    const metadata = body.metadata ?? {};
    const read = readInput(body.input);
    assertStorable({ metadata, tool_results: read.outputs.map(({ item }) => ({ output: outputText(item) })) });
    if (read.outputs.length > 0) {
      const paused = await pausedResponseOf(c, body, read);
      if (paused) return continueWithOutputs(c, body, read, paused);
    }
    // Earlier items with a named session repeat what the session holds; without one they are its history.
    const named = Boolean(body.previous_response_id || body.conversation);
    const history =
      !named && (read.earlier.length > 0 || read.turn === null)
        ? historyOf(await resolveReferences(c, read.earlier), read.outputs)
        : undefined;
    const input = read.turn ?? [];
    if (read.turn !== null) {
      const checked = runInput.safeParse(input);
      if (!checked.success) throw invalidFields([{ path: "input", message: checked.error.issues[0]?.message ?? "invalid" }]);
    }
    const session_id = await sessionOf(c, body);
    const settings = responseRunSettings(body, read);
    let surface: ResponseSurface | undefined;
    const answer = await startTurn(c, body, {
      agent_id: body.model,
      input,
      session_id,
      output_schema: outputSchemaOf(body),
      metadata,
      stream: body.stream ?? false,
      background: body.background ?? false,
      settings,
      adapt: (agent) => runAgent(agent, body),
      // A busy session follows the agent's on_busy; a steer would answer another response's run.
      steerAs: "enqueue",
      history,
      caller: await callerOf(body),
      surface: (agent) => (surface = surfaceOf(agent, { ...body, instructions: settings.instructions ?? null })),
    });
    const { run, stream } = unwrap(answer);
    // A replayed request (Idempotency-Key) is answered its first run, with the surface that run kept.
    const kept = surface ?? surfaceOf(await runnableAgent(c.env, c.get("tenant"), body.model), null);
    if (stream) return streamResponse(c, run, kept, stream);
    return c.json(await responseOf(c, run, kept), 200);
  })
  .openapi(getResponse, async (c) => {
    const { response_id } = c.req.valid("param");
    const tenant = c.get("tenant");
    const query = c.req.valid("query");
    const stored = await ownedResponse(c.env.DB, tenant, response_id);
    if (query.starting_after !== undefined && query.stream !== "true") {
      throw invalidFields([{ path: "query.starting_after", message: "only with stream=true" }]);
    }
    const surface = storedSurface(stored);
    if (query.stream === "true") return watchResponse(c, renderRun(stored), surface, { startingAfter: query.starting_after });
    return c.json(await responseOf(c, await currentRun(c.env, tenant, stored), surface), 200);
  })
  .openapi(cancelResponse, async (c) => {
    const { response_id } = c.req.valid("param");
    const tenant = c.get("tenant");
    const stored = await ownedResponse(c.env.DB, tenant, response_id);
    const result = await callSession(
      c.env,
      tenant,
      stored.session_id,
      (stub) => stub.cancelRun({ tenant, session_id: stored.session_id }, response_id),
      {
        idempotent: true,
      },
    );
    return c.json(await responseOf(c, unwrap(result).run, storedSurface(stored)), 200);
  })
  .openapi(inputItemsRoute, async (c) => {
    const { response_id } = c.req.valid("param");
    const stored = await ownedResponse(c.env.DB, c.get("tenant"), response_id);
    return c.json(renderInputItems(renderRun(stored)), 200);
  })
  .openapi(deleteResponse, async (c) => {
    const { response_id } = c.req.valid("param");
    const tenant = c.get("tenant");
    const stored = await ownedResponse(c.env.DB, tenant, response_id);
    const run = await currentRun(c.env, tenant, stored);
    if (isUnfinished(run.status)) {
      const waiting = run.status === "paused" ? "waits for its function call outputs" : "is still in progress";
      throw new ApiError("session_busy", `Response ${run.id} ${waiting}: cancel it first`, { code: "response_active" });
    }
    await markResponseDeleted(c.env.DB, tenant, run);
    return c.json({ id: run.id, object: "response" as const, deleted: true as const }, 200);
  });
