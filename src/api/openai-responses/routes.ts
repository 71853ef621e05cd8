import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { Agent } from "../../agents";
import { CLIENT_ID } from "../../core/ids";
import { ownedRun } from "../../db/runs";
import { currentRun } from "../current-run";
import { invalidFields } from "../errors";
import { authErrors } from "../responses";
import { bearerSecurity, newRouter, type AppEnv } from "../router";
import { runInput } from "../run-schemas";
import { unwrap } from "../session-client";
import { startTurn } from "../start-turn";
import { assertStorable } from "../stored-limits";
import { openAiErrorSchema } from "./error-schema";
import { renderResponse } from "./render";
import { createResponseBody, turnInput, type CreateResponseBody } from "./request";

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
const errors = {
  400: openAiError("A field Agentry refuses or does not serve; error.param names it"),
  404: openAiError("Unknown agent (model), response or conversation"),
  409: openAiError("The session's turn is active (x-should-retry: false)"),
  401: openAiError(authErrors[401].description),
  429: openAiError(authErrors[429].description),
};
const responseParams = z.object({ response_id: z.string().regex(CLIENT_ID, "not a valid response id") });

const createResponse = createRoute({
  method: "post",
  path: "/responses",
  tags: ["openai-responses"],
  summary: "OpenAI Responses: run one turn of the agent named by `model`",
  security: bearerSecurity,
  request: { body: { required: true, content: { "application/json": { schema: createResponseBody } } } },
  responses: { 200: { description: "The response once its run has stopped", content: { "application/json": { schema: responseSchema } } }, ...errors },
});

const getResponse = createRoute({
  method: "get",
  path: "/responses/{response_id}",
  tags: ["openai-responses"],
  summary: "OpenAI Responses: a response (its run) as it is now",
  security: bearerSecurity,
  request: { params: responseParams, query: z.strictObject({}) },
  responses: { 200: { description: "The response", content: { "application/json": { schema: responseSchema } } }, ...errors },
});

/** The session a request continues: that of `previous_response_id`, or the `conversation`; absent: a new one. */
async function sessionOf(c: Context<AppEnv>, body: CreateResponseBody): Promise<string | undefined> {
  if (body.previous_response_id && body.conversation) {
    throw invalidFields([{ path: "conversation", message: "give previous_response_id or conversation, not both" }]);
  }
  if (body.previous_response_id) return (await ownedRun(c.env.DB, c.get("tenant"), null, body.previous_response_id)).session_id;
  const conversation = typeof body.conversation === "string" ? body.conversation : body.conversation?.id;
  if (conversation !== undefined && !CLIENT_ID.test(conversation)) {
    throw invalidFields([{ path: "conversation", message: "not a valid conversation (session) id" }]);
  }
  return conversation;
}

/** The request's `instructions` follow the agent's own, for this run only. */
const withInstructions = (instructions: string | null | undefined) =>
  instructions ? (agent: Agent): Agent => ({ ...agent, instructions: [agent.instructions, instructions].filter(Boolean).join("\n\n") }) : undefined;

/** `/v1/responses`: OpenAI's Responses API over Agentry's runs and sessions (docs/responses-api.md). */
export const openAiResponseRoutes = newRouter()
  .openapi(createResponse, async (c) => {
    const body = c.req.valid("json");
    const metadata = body.metadata ?? {};
    assertStorable({ metadata });
    if (typeof body.input !== "string" && body.input.some((item) => item.type === "function_call_output")) {
      throw invalidFields([{ path: "input", message: "function_call_output items are not supported yet" }]);
    }
    const input = turnInput(body.input);
    const checked = runInput.safeParse(input);
    if (!checked.success) throw invalidFields([{ path: "input", message: checked.error.issues[0]?.message ?? "invalid" }]);
    const session_id = await sessionOf(c, body);
    const answer = await startTurn(c, body, {
      agent_id: body.model,
      input,
      session_id,
      output_schema: null,
      metadata,
      stream: false,
      background: false,
      adapt: withInstructions(body.instructions),
    });
    return c.json(renderResponse(unwrap(answer).run), 200);
  })
  .openapi(getResponse, async (c) => {
    const { response_id } = c.req.valid("param");
    const tenant = c.get("tenant");
    const stored = await ownedRun(c.env.DB, tenant, null, response_id);
    return c.json(renderResponse(await currentRun(c.env, tenant, stored)), 200);
  });
