import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

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
    /**
     * The run record (JSON) without its write-once values, which are in `run_inputs` (runs
     * mirrored before that table carry them here); the columns beside it are for queries.
     */
    body: text().notNull(),
    createdAt: text().notNull(),
    updatedAt: text().notNull(),
  },
  (t) => [
    index("runs_by_agent").on(t.tenant, t.agentId, t.createdAt, t.id),
    index("runs_by_session").on(t.tenant, t.sessionId, t.createdAt, t.id),
    // The usage roll-up and the stuck-run sweep read runs by time.
    index("runs_by_time").on(t.createdAt),
    index("runs_by_status").on(t.status, t.updatedAt),
  ],
);

/**
 * A run's write-once values (agent snapshot, input, output schema; JSON), mirrored once when the
 * run is created, so that every later save of the run sends only its small changing body.
 */
export const runInputs = sqliteTable(
  "run_inputs",
  {
    id: text().primaryKey(),
    tenant: text().notNull(),
    sessionId: text().notNull(),
    body: text().notNull(),
  },
  (t) => [index("run_inputs_by_session").on(t.tenant, t.sessionId)],
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
  // No index by run: D1's messages are read by session alone (a rebuild; migration 0008 dropped `messages_by_run`).
  (t) => [primaryKey({ columns: [t.tenant, t.sessionId, t.idx] })],
);

/** The stored event log (docs/api.md, Events): every event of a session, by its per-session seq. */
export const events = sqliteTable(
  "events",
  {
    tenant: text().notNull(),
    sessionId: text().notNull(),
    seq: integer().notNull(),
    runId: text().notNull(),
    type: text().notNull(),
    /** The event's `data` (JSON). */
    data: text().notNull(),
    createdAt: text().notNull(),
  },
  (t) => [
    // No index by run: D1's events are read by session (a run's among them along the key; migration 0008
    // dropped `events_by_run`, a row written per pack for a read that never came).
    primaryKey({ columns: [t.tenant, t.sessionId, t.seq] }),
    index("events_by_age").on(t.createdAt),
  ],
);

/** Daily usage per tenant and agent, written by the Cron roll-up (docs/api.md, GET /v1/usage). */
export const usageDaily = sqliteTable(
  "usage_daily",
  {
    tenant: text().notNull(),
    date: text().notNull(),
    agentId: text().notNull(),
    runs: integer().notNull(),
    inputTokens: integer().notNull(),
    outputTokens: integer().notNull(),
    cacheReadTokens: integer().notNull(),
    cacheWriteTokens: integer().notNull(),
    costUsd: real(),
  },
  (t) => [primaryKey({ columns: [t.tenant, t.date, t.agentId] })],
);

/**
 * `Idempotency-Key`s of creating POSTs, kept 24 hours: the request's fingerprint and what
 * it created (JSON), so a retried POST gets the first answer again.
 */
export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    tenant: text().notNull(),
    key: text().notNull(),
    fingerprint: text().notNull(),
    result: text(),
    createdAt: text().notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenant, t.key] }), index("idempotency_by_age").on(t.createdAt)],
);

/**
 * Compaction summaries (docs/api.md: Compaction): the summary of a branch's messages up to
 * `to_idx`, which later turns send instead of them. Transcript rows are never deleted.
 */
export const compactions = sqliteTable(
  "compactions",
  {
    tenant: text().notNull(),
    sessionId: text().notNull(),
    id: text().notNull(),
    runId: text().notNull(),
    fromIdx: integer().notNull(),
    toIdx: integer().notNull(),
    summary: text().notNull(),
    tokensBefore: integer().notNull(),
    tokensAfter: integer().notNull(),
    createdAt: text().notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenant, t.sessionId, t.id] })],
);

/**
 * Tenants' provider credentials (docs/api.md, Provider credentials). `ciphertext` holds the key and
 * header values, AES-GCM encrypted with `CREDENTIALS_KEY` (src/credentials/crypto.ts).
 */
export const credentials = sqliteTable(
  "credentials",
  {
    tenant: text().notNull(),
    id: text().notNull(),
    provider: text().notNull(),
    baseUrl: text(),
    /** The names of the extra headers (JSON array); their values are in `ciphertext`. */
    headerNames: text().notNull(),
    ciphertext: text().notNull(),
    createdAt: text().notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenant, t.id] }), index("credentials_list").on(t.tenant, t.createdAt, t.id)],
);

/**
 * Mirror statements D1 rejected for good (src/session/store/mirror.ts): the statements stay in
 * the session object's `quarantine` table; this row tells the operator (`GET /v1/quarantine`,
 * the count in `GET /v1/health`) which session holds them, how many and D1's error.
 */
export const mirrorQuarantine = sqliteTable(
  "mirror_quarantine",
  {
    tenant: text().notNull(),
    sessionId: text().notNull(),
    /** The entry's id in the object's `quarantine` table. */
    id: integer().notNull(),
    statements: integer().notNull(),
    error: text().notNull(),
    at: text().notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenant, t.sessionId, t.id] }), index("mirror_quarantine_at").on(t.at)],
);

/**
 * Responses deleted with `DELETE /v1/responses/{id}` (docs/responses-api.md): the run stays (a
 * session's history is its runs); `/v1/responses` answers 404 for it from then on.
 */
export const deletedResponses = sqliteTable(
  "deleted_responses",
  {
    tenant: text().notNull(),
    runId: text().notNull(),
    sessionId: text().notNull(),
    deletedAt: text().notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenant, t.runId] })],
);

/**
 * Lifecycle webhooks of a tenant (docs/webhooks.md). `events` is a JSON array of event types;
 * `ciphertext` holds the signing secret, AES-GCM encrypted with `CREDENTIALS_KEY`
 * (src/credentials/crypto.ts), never returned after creation.
 */
export const webhooks = sqliteTable(
  "webhooks",
  {
    tenant: text().notNull(),
    id: text().notNull(),
    url: text().notNull(),
    events: text().notNull(),
    agentId: text(),
    ciphertext: text().notNull(),
    createdAt: text().notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenant, t.id] }), index("webhooks_list").on(t.tenant, t.createdAt, t.id)],
);

/**
 * One event for one webhook (docs/webhooks.md): made in D1 by the session mirror's fan-out
 * statement (src/session/store/mirror-statements.ts), attempted by the webhook queue's consumer
 * (src/webhooks). `id` is the `webhook-id` every attempt sends; `(webhook_id, event_key, event_type)`
 * makes a replayed fan-out a no-op. `round_start` is `attempts` when the current schedule began
 * (0, or the attempts made before a redeliver).
 */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: text().primaryKey(),
    tenant: text().notNull(),
    webhookId: text().notNull(),
    eventKey: text().notNull(),
    eventType: text().notNull(),
    runId: text().notNull(),
    sessionId: text().notNull(),
    agentId: text().notNull(),
    runStatus: text().notNull(),
    /** The event's time: the payload's `timestamp`, the same on every attempt. */
    eventAt: text().notNull(),
    attempts: integer().notNull(),
    roundStart: integer().notNull(),
    status: text().notNull(),
    lastStatusCode: integer(),
    nextAttemptAt: text(),
    createdAt: text().notNull(),
  },
  (t) => [
    uniqueIndex("webhook_deliveries_event").on(t.webhookId, t.eventKey, t.eventType),
    index("webhook_deliveries_list").on(t.tenant, t.webhookId, t.createdAt, t.id),
    index("webhook_deliveries_due").on(t.status, t.nextAttemptAt),
  ],
);
