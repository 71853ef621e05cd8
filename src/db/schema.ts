import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/**
 * The D1 mirror. Every row is scoped by `tenant`; client-chosen ids are unique per tenant.
 * JSON columns hold provider-neutral data as text.
 */

export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: text().primaryKey(),
    tenant: text().notNull(),
    name: text().notNull(),
    keyHash: text().notNull(),
    createdAt: text().notNull(),
  },
  (t) => [uniqueIndex("api_keys_hash").on(t.keyHash), uniqueIndex("api_keys_tenant_name").on(t.tenant, t.name)],
);

export const agents = sqliteTable(
  "agents",
  {
    tenant: text().notNull(),
    id: text().notNull(),
    version: integer().notNull(),
    /** The whole definition as the API shows it (JSON). */
    definition: text().notNull(),
    createdAt: text().notNull(),
    updatedAt: text().notNull(),
    /** Deleted agents keep their row so their ids are never reused. */
    deletedAt: text(),
  },
  (t) => [primaryKey({ columns: [t.tenant, t.id] }), index("agents_list").on(t.tenant, t.createdAt, t.id)],
);

export const sessions = sqliteTable(
  "sessions",
  {
    tenant: text().notNull(),
    id: text().notNull(),
    agentId: text().notNull(),
    /** Highest event seq handed out, so a rebuilt object never reuses one. */
    lastSeq: integer().notNull().default(0),
    createdAt: text().notNull(),
    updatedAt: text().notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.tenant, t.id] }),
    index("sessions_list").on(t.tenant, t.createdAt, t.id),
    index("sessions_by_agent").on(t.tenant, t.agentId, t.createdAt, t.id),
  ],
);

export const runs = sqliteTable(
  "runs",
  {
    id: text().primaryKey(),
    tenant: text().notNull(),
    sessionId: text().notNull(),
    agentId: text().notNull(),
    agentVersion: integer().notNull(),
    status: text().notNull(),
    /** The Run object as the API shows it (JSON); the columns beside it are for queries. */
    body: text().notNull(),
    createdAt: text().notNull(),
    updatedAt: text().notNull(),
  },
  (t) => [
    index("runs_by_agent").on(t.tenant, t.agentId, t.createdAt, t.id),
    index("runs_by_session").on(t.tenant, t.sessionId, t.createdAt, t.id),
  ],
);

export const messages = sqliteTable(
  "messages",
  {
    tenant: text().notNull(),
    sessionId: text().notNull(),
    /** Position in the session, from 0, append-only. */
    idx: integer().notNull(),
    runId: text().notNull(),
    role: text().notNull(),
    /** Block[] (JSON). */
    content: text().notNull(),
    createdAt: text().notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenant, t.sessionId, t.idx] })],
);
