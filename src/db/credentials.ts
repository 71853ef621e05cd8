import { and, desc, eq, isNull, lt, or, sql } from "drizzle-orm";
import type { Cursor } from "../core/cursor";
import { database } from "./client";
import { agents, credentials } from "./schema";

/** A stored credential: its key and header values only as `ciphertext`. */
export type CredentialRow = typeof credentials.$inferSelect;

const one = (tenant: string, id: string) => and(eq(credentials.tenant, tenant), eq(credentials.id, id));

/** Stores a credential; false when the tenant already has one with that id. */
export async function insertCredential(d1: D1Database, row: CredentialRow): Promise<boolean> {
  const result = await database(d1).insert(credentials).values(row).onConflictDoNothing().run();
  return result.meta.changes > 0;
}

/**
 * Replaces a credential's encrypted value (an MCP OAuth credential's state) if it still is
 * `expected` (no one wrote it since it was read); false when it is gone or was changed meanwhile.
 */
export async function updateCredentialSecret(
  d1: D1Database,
  tenant: string,
  id: string,
  ciphertext: string,
  expected: string,
): Promise<boolean> {
  const result = await database(d1)
    .update(credentials)
    .set({ ciphertext })
    .where(and(one(tenant, id), eq(credentials.ciphertext, expected)))
    .run();
  return result.meta.changes > 0;
}

/** The tenant's credential row, if it exists. */
export async function findCredentialRow(d1: D1Database, tenant: string, id: string): Promise<CredentialRow | undefined> {
  return database(d1).select().from(credentials).where(one(tenant, id)).get();
}

/** Up to `limit` of the tenant's credentials, newest first, after `cursor`. */
export async function listCredentials(d1: D1Database, tenant: string, limit: number, cursor: Cursor | null): Promise<CredentialRow[]> {
  const after = cursor
    ? or(lt(credentials.createdAt, cursor.createdAt), and(eq(credentials.createdAt, cursor.createdAt), lt(credentials.id, cursor.id)))
    : undefined;
  return database(d1)
    .select()
    .from(credentials)
    .where(and(eq(credentials.tenant, tenant), after))
    .orderBy(desc(credentials.createdAt), desc(credentials.id))
    .limit(limit)
    .all();
}

/** The tenant's live agents whose definition names the credential `id`: as theirs, or an MCP tool's (docs/mcp.md). */
const agentsNaming = (tenant: string, id: string) =>
  and(
    eq(agents.tenant, tenant),
    isNull(agents.deletedAt),
    or(
      sql`json_extract(${agents.definition}, '$.credential') = ${id}`,
      sql`exists (select 1 from json_each(${agents.definition}, '$.tools') as t where json_extract(t.value, '$.credential') = ${id})`,
    ),
  );

/** Ids of the tenant's live agents that name the credential `id`. */
export async function agentsUsingCredential(d1: D1Database, tenant: string, id: string): Promise<string[]> {
  const rows = await database(d1).select({ id: agents.id }).from(agents).where(agentsNaming(tenant, id)).orderBy(agents.id).all();
  return rows.map((row) => row.id);
}

/**
 * Deletes the credential unless a live agent of the tenant names it, in one statement (an agent
 * changed between a check and the delete cannot slip through); false when nothing was deleted.
 */
export async function deleteUnusedCredential(d1: D1Database, tenant: string, id: string): Promise<boolean> {
  const db = database(d1);
  const inUse = db.select({ one: sql`1` }).from(agents).where(agentsNaming(tenant, id));
  const result = await db
    .delete(credentials)
    .where(and(one(tenant, id), sql`not exists ${inUse}`))
    .run();
  return result.meta.changes > 0;
}
