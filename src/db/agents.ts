import { and, desc, eq, isNull, lt, or } from "drizzle-orm";
import { agentDefinitionSchema, definitionOf } from "../agents";
import type { Agent, AgentDefinition } from "../agents";
import type { Cursor } from "../core/cursor";
import { database } from "./client";
import { agents } from "./schema";
import { parseStored } from "../core/json-depth";

type AgentRow = typeof agents.$inferSelect;

function agentOf(row: AgentRow): Agent {
  const definition = agentDefinitionSchema.parse(parseStored(row.definition));
  return { id: row.id, ...definition, version: row.version, created_at: row.createdAt, updated_at: row.updatedAt };
}

const live = (tenant: string, id: string) => and(eq(agents.tenant, tenant), eq(agents.id, id), isNull(agents.deletedAt));

/** The tenant's agent, or null when it does not exist or was deleted. */
export async function findAgent(d1: D1Database, tenant: string, id: string): Promise<Agent | null> {
  const row = await database(d1).select().from(agents).where(live(tenant, id)).get();
  return row ? agentOf(row) : null;
}

/** Stores a new agent; false when the tenant has (or had: deleted ids are kept) that id. */
export async function insertAgent(d1: D1Database, tenant: string, agent: Agent): Promise<boolean> {
  const result = await database(d1)
    .insert(agents)
    .values({
      tenant,
      id: agent.id,
      version: agent.version,
      definition: JSON.stringify(definitionOf(agent)),
      createdAt: agent.created_at,
      updatedAt: agent.updated_at,
    })
    .onConflictDoNothing()
    .run();
  return result.meta.changes > 0;
}

/**
 * Replaces a live agent's definition if it is still at `version` (optimistic concurrency);
 * false when it changed or was deleted meanwhile.
 */
export async function updateAgent(
  d1: D1Database,
  tenant: string,
  id: string,
  version: number,
  definition: AgentDefinition,
  updatedAt: string,
): Promise<boolean> {
  const result = await database(d1)
    .update(agents)
    .set({ version: version + 1, definition: JSON.stringify(definition), updatedAt })
    .where(and(live(tenant, id), eq(agents.version, version)))
    .run();
  return result.meta.changes > 0;
}

/** Marks a live agent deleted (its row stays, so the id is never reused); false when there was none. */
export async function deleteAgent(d1: D1Database, tenant: string, id: string, deletedAt: string): Promise<boolean> {
  const result = await database(d1).update(agents).set({ deletedAt }).where(live(tenant, id)).run();
  return result.meta.changes > 0;
}

/** Up to `limit` live agents, newest first, after `cursor`. */
export async function listAgents(
  d1: D1Database,
  tenant: string,
  limit: number,
  cursor: Cursor | null,
): Promise<(Cursor & { agent: Agent })[]> {
  const after = cursor
    ? or(lt(agents.createdAt, cursor.createdAt), and(eq(agents.createdAt, cursor.createdAt), lt(agents.id, cursor.id)))
    : undefined;
  const rows = await database(d1)
    .select()
    .from(agents)
    .where(and(eq(agents.tenant, tenant), isNull(agents.deletedAt), after))
    .orderBy(desc(agents.createdAt), desc(agents.id))
    .limit(limit)
    .all();
  return rows.map((row) => ({ createdAt: row.createdAt, id: row.id, agent: agentOf(row) }));
}
