import { createRoute, z } from "@hono/zod-openapi";
import { agentCreateSchema, agentDefinitionSchema, agentPatchSchema, agentSchema, definitionOf, definitionProblems } from "../agents";
import type { Agent, AgentDefinition, CheckEnv } from "../agents";
import { newId, nowIso } from "../core/ids";
import { deleteAgent, findAgent, insertAgent, listAgents, updateAgent } from "../db/agents";
import { assertCredentialUsable } from "./agent-credential";
import { idempotentCreate, idempotencyKeyHeaders } from "./idempotency";
import { ApiError, assertNoProblems, fieldsOf, invalidFields, notFound } from "./errors";
import { decodeCursor, listQuery, listSchema, page } from "./pagination";
import { authErrors, bodyErrors, errorResponses } from "./responses";
import { bearerSecurity, newRouter } from "./router";

const agentDoc = agentSchema.openapi("Agent");
const agentIdParams = z.object({ agent_id: z.string().openapi({ param: { name: "agent_id", in: "path" } }) });
const common = { tags: ["agents"], security: bearerSecurity };
const json = <T extends z.ZodType>(schema: T) => ({ "application/json": { schema } });

const createAgentRoute = createRoute({
  operationId: "createAgent",
  ...common,
  method: "post",
  path: "/agents",
  summary: "Create an agent",
  request: { headers: idempotencyKeyHeaders, body: { required: true, content: json(agentCreateSchema.openapi("AgentCreate")) } },
  responses: {
    201: { description: "The agent, defaults filled, version 1", content: json(agentDoc) },
    404: errorResponses[404],
    409: errorResponses[409],
    ...bodyErrors,
  },
});

const listAgentsRoute = createRoute({
  operationId: "listAgents",
  ...common,
  method: "get",
  path: "/agents",
  summary: "List agents, newest first",
  request: { query: listQuery({}) },
  responses: { 200: { description: "A page of agents", content: json(listSchema(agentDoc)) }, 400: errorResponses[400], ...authErrors },
});

const getAgentRoute = createRoute({
  operationId: "getAgent",
  ...common,
  method: "get",
  path: "/agents/{agent_id}",
  summary: "Read an agent",
  request: { params: agentIdParams },
  responses: { 200: { description: "The agent", content: json(agentDoc) }, 404: errorResponses[404], ...authErrors },
});

const patchAgentRoute = createRoute({
  operationId: "updateAgent",
  ...common,
  method: "patch",
  path: "/agents/{agent_id}",
  summary: "Change some fields of an agent; a change increments its version",
  request: {
    params: agentIdParams,
    body: { required: true, content: json(agentPatchSchema.openapi("AgentPatch")) },
  },
  responses: {
    200: { description: "The agent after the change", content: json(agentDoc) },
    404: errorResponses[404],
    ...bodyErrors,
  },
});

const deleteAgentRoute = createRoute({
  operationId: "deleteAgent",
  ...common,
  method: "delete",
  path: "/agents/{agent_id}",
  summary: "Delete an agent; its sessions stay readable, its id is never reused",
  request: { params: agentIdParams },
  responses: { 204: { description: "Deleted" }, 404: errorResponses[404], ...authErrors },
});

/** What the schema cannot check (outbound URLs, size, a budget's price, the credential): 4xx naming the field. */
async function assertAcceptable(definition: AgentDefinition, env: CheckEnv & { DB: D1Database }, tenant: string): Promise<void> {
  assertNoProblems(definitionProblems(definition, env));
  await assertCredentialUsable(env.DB, tenant, definition);
}

/** A changed definition is written only if no other change landed since it was read. */
const MAX_PATCH_ATTEMPTS = 5;

/** `/v1/agents`: stored agent definitions of the caller's tenant (docs/api.md, Agents). */
export const agentRoutes = newRouter()
  .openapi(createAgentRoute, async (c) => {
    const body = c.req.valid("json");
    const { id, ...definition } = body;
    await assertAcceptable(definition, c.env, c.get("tenant"));
    const created = await idempotentCreate(c, body, async () => {
      const now = nowIso();
      const agent: Agent = { id: id ?? newId("agt"), ...definition, version: 1, created_at: now, updated_at: now };
      if (!(await insertAgent(c.env.DB, c.get("tenant"), agent))) {
        throw new ApiError("already_exists", `Agent ${agent.id} already exists (ids of deleted agents are not reused)`);
      }
      return { body: agent };
    });
    return c.json(created, 201);
  })
  .openapi(listAgentsRoute, async (c) => {
    const { limit, cursor } = c.req.valid("query");
    const rows = await listAgents(c.env.DB, c.get("tenant"), limit + 1, decodeCursor(cursor));
    return c.json(
      page(rows, limit, (row) => row.agent),
      200,
    );
  })
  .openapi(getAgentRoute, async (c) => {
    const { agent_id } = c.req.valid("param");
    const agent = await findAgent(c.env.DB, c.get("tenant"), agent_id);
    if (!agent) throw notFound("agent", agent_id);
    return c.json(agent, 200);
  })
  .openapi(patchAgentRoute, async (c) => {
    const { agent_id } = c.req.valid("param");
    const patch = c.req.valid("json");
    const tenant = c.get("tenant");
    for (let attempt = 0; attempt < MAX_PATCH_ATTEMPTS; attempt++) {
      const current = await findAgent(c.env.DB, tenant, agent_id);
      if (!current) throw notFound("agent", agent_id);
      const before = definitionOf(current);
      const merged = agentDefinitionSchema.safeParse({ ...before, ...patch });
      if (!merged.success) throw invalidFields(fieldsOf(merged.error));
      await assertAcceptable(merged.data, c.env, tenant);
      if (JSON.stringify(merged.data) === JSON.stringify(before)) return c.json(current, 200);
      const updatedAt = nowIso();
      if (await updateAgent(c.env.DB, tenant, agent_id, current.version, merged.data, updatedAt)) {
        return c.json(
          { id: agent_id, ...merged.data, version: current.version + 1, created_at: current.created_at, updated_at: updatedAt },
          200,
        );
      }
    }
    throw new ApiError("internal", `Agent ${agent_id} kept changing; try again`);
  })
  .openapi(deleteAgentRoute, async (c) => {
    const { agent_id } = c.req.valid("param");
    if (!(await deleteAgent(c.env.DB, c.get("tenant"), agent_id, nowIso()))) throw notFound("agent", agent_id);
    return c.body(null, 204);
  });
