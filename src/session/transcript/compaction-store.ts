import { and, eq } from "drizzle-orm";
import { database } from "../../db/client";
import { compactions } from "../../db/schema";
import { template } from "../../db/statements";
import type { MirrorStatement } from "../store/session-store";

/** A stored compaction: the summary of a branch's messages from `from_index` to `to_index`. */
export type Compaction = {
  id: string;
  run_id: string;
  from_index: number;
  to_index: number;
  summary: string;
  tokens_before: number;
  tokens_after: number;
  created_at: string;
};

export const COMPACTIONS_SCHEMA = `
CREATE TABLE IF NOT EXISTS compactions (id TEXT PRIMARY KEY, run_id TEXT NOT NULL, from_index INTEGER NOT NULL, to_index INTEGER NOT NULL, summary TEXT NOT NULL, tokens_before INTEGER NOT NULL, tokens_after INTEGER NOT NULL, created_at TEXT NOT NULL);
`;

/** The object's compactions, oldest first (the table lives beside the ledger's). */
export class CompactionStore {
  constructor(private readonly sql: SqlStorage) {}

  private ensure(): void {
    this.sql.exec(COMPACTIONS_SCHEMA);
  }

  all(): Compaction[] {
    this.ensure();
    return this.sql.exec<Compaction>("SELECT * FROM compactions ORDER BY created_at, id").toArray();
  }

  put(c: Compaction): void {
    this.ensure();
    this.sql.exec(
      "INSERT OR IGNORE INTO compactions (id, run_id, from_index, to_index, summary, tokens_before, tokens_after, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      c.id,
      c.run_id,
      c.from_index,
      c.to_index,
      c.summary,
      c.tokens_before,
      c.tokens_after,
      c.created_at,
    );
  }
}

const insertCompaction = template<
  "tenant" | "sessionId" | "id" | "runId" | "fromIdx" | "toIdx" | "summary" | "tokensBefore" | "tokensAfter" | "createdAt"
>((b, p) =>
  b
    .insert(compactions)
    .values({
      tenant: p("tenant"),
      sessionId: p("sessionId"),
      id: p("id"),
      runId: p("runId"),
      fromIdx: p("fromIdx"),
      toIdx: p("toIdx"),
      summary: p("summary"),
      tokensBefore: p("tokensBefore"),
      tokensAfter: p("tokensAfter"),
      createdAt: p("createdAt"),
    })
    .onConflictDoNothing(),
);

export const mirrorCompaction = (tenant: string, sessionId: string, c: Compaction): MirrorStatement =>
  insertCompaction({
    tenant,
    sessionId,
    id: c.id,
    runId: c.run_id,
    fromIdx: c.from_index,
    toIdx: c.to_index,
    summary: c.summary,
    tokensBefore: c.tokens_before,
    tokensAfter: c.tokens_after,
    createdAt: c.created_at,
  });

/** Copies the mirror's compactions of a session into a rebuilt object. */
export async function rebuildCompactions(store: CompactionStore, db: D1Database, tenant: string, sessionId: string): Promise<void> {
  const rows = await database(db)
    .select({
      id: compactions.id,
      run_id: compactions.runId,
      from_index: compactions.fromIdx,
      to_index: compactions.toIdx,
      summary: compactions.summary,
      tokens_before: compactions.tokensBefore,
      tokens_after: compactions.tokensAfter,
      created_at: compactions.createdAt,
    })
    .from(compactions)
    .where(and(eq(compactions.tenant, tenant), eq(compactions.sessionId, sessionId)))
    .all();
  for (const c of rows) store.put(c);
}
