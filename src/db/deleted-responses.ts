import { and, eq } from "drizzle-orm";
import { database } from "./client";
import { deletedResponses } from "./schema";

/** Whether the tenant deleted the response of run `runId` (docs/responses-api.md, "Deleting a response"). */
export async function isResponseDeleted(d1: D1Database, tenant: string, runId: string): Promise<boolean> {
  const row = await database(d1)
    .select({ runId: deletedResponses.runId })
    .from(deletedResponses)
    .where(and(eq(deletedResponses.tenant, tenant), eq(deletedResponses.runId, runId)))
    .get();
  return row !== undefined;
}

/** Records the deletion of a run's response; deleting it again changes nothing. */
export async function insertDeletedResponse(d1: D1Database, row: typeof deletedResponses.$inferInsert): Promise<void> {
  await database(d1).insert(deletedResponses).values(row).onConflictDoNothing().run();
}
