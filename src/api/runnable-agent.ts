import { endpointProblems, type Agent } from "../agents";
import { findAgent } from "../db/agents";
import type { Env } from "../env";
import { assertNoProblems, notFound } from "./errors";

/**
 * The agent a new run (a turn or a branch) will use: 404 when the tenant has no such live
 * agent; 400 naming `base_url` when the operator's variables no longer allow its endpoint.
 */
export async function runnableAgent(env: Env, tenant: string, agentId: string): Promise<Agent> {
  const agent = await findAgent(env.DB, tenant, agentId);
  if (!agent) throw notFound("Agent", agentId);
  assertNoProblems(endpointProblems(agent, env));
  return agent;
}
