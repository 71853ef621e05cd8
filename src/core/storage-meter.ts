/**
 * Counts the rows an isolate reads and writes in its session objects' SQLite and in D1, for the
 * bench's cost figures (docs/performance.md, "What a run costs"). Off unless the variable
 * `STORAGE_METER` is `"1"` (the bench's `wrangler dev` sets it): then the storage handles are
 * wrapped, and `GET /v1/admin/storage-meter` reads and resets the counts. Locally the Worker and
 * its objects share one isolate, so one set of counters sees both.
 */

export type MeterCounts = {
  object_rows_read: number;
  object_rows_written: number;
  object_queries: number;
  d1_rows_read: number;
  d1_rows_written: number;
  d1_queries: number;
  /** D1's size after its latest metered write, in bytes (0 before one). */
  d1_bytes: number;
  /** Session objects that ran a statement since the last reading, and their storage together, in bytes. */
  objects: number;
  object_bytes: number;
  /** Calls into Durable Objects (sessions, tenant ledgers): RPC method calls and fetches on their stubs, and alarms. */
  object_requests: number;
  /** Messages sent to the run queue. */
  queue_messages: number;
  /** Rows written by each statement's text (its first 100 characters), object and D1 apart: where the writes go. */
  writes_by_statement: Record<string, number>;
};

const zero = (): MeterCounts => ({
  object_rows_read: 0,
  object_rows_written: 0,
  object_queries: 0,
  d1_rows_read: 0,
  d1_rows_written: 0,
  d1_queries: 0,
  d1_bytes: 0,
  objects: 0,
  object_bytes: 0,
  object_requests: 0,
  queue_messages: 0,
  writes_by_statement: {},
});

let counts = zero();
/** SQLite cursors not yet counted: a cursor's rows are known once it has been read. */
let cursors: { query: string; cursor: SqlStorageCursor<Record<string, SqlStorageValue>> }[] = [];

function addWrites(where: "object" | "d1", query: string, rows: number): void {
  if (rows === 0) return;
  const key = `${where}: ${query.replace(/\s+/g, " ").slice(0, 100)}`;
  counts.writes_by_statement[key] = (counts.writes_by_statement[key] ?? 0) + rows;
}
/** The storage size of each object that ran a statement since the last reading, as of its latest statement. */
let touched = new Map<SqlStorage, number>();

export const meterOn = (env: { STORAGE_METER?: string }): boolean => env.STORAGE_METER === "1";

type MeteredBindings = { STORAGE_METER?: string; DB: D1Database; RUNS: Queue<never>; SESSION?: unknown; LEDGER?: unknown };

/** The environment with its D1 binding, run queue and session objects metered, when the meter is on. */
export function meteredEnv<E extends MeteredBindings>(env: E): E {
  if (!meterOn(env)) return env;
  const metered: E = { ...env, DB: meterD1(env.DB), RUNS: meterQueue(env.RUNS) };
  if (env.SESSION) metered.SESSION = meterNamespace(env.SESSION as DurableObjectNamespace);
  if (env.LEDGER) metered.LEDGER = meterNamespace(env.LEDGER as DurableObjectNamespace);
  return metered;
}

/** An alarm of a session object, counted as the request it is billed as. */
export function meterAlarm(env: { STORAGE_METER?: string }): void {
  if (meterOn(env)) counts.object_requests += 1;
}

function meterQueue<Q extends Queue<never>>(queue: Q): Q {
  return new Proxy(queue, {
    get(target, property) {
      if (property === "send") counts.queue_messages += 1;
      if (property === "sendBatch") throw new Error("storage meter: sendBatch is not counted");
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** Each method called on a stub is its own billed request (an RPC session). */
function meterStub(stub: DurableObjectStub): DurableObjectStub {
  return new Proxy(stub, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      // An RPC stub's methods are callables bound to it (their own `apply` would be an RPC call).
      return (...args: unknown[]) => {
        counts.object_requests += 1;
        return (value as (...a: unknown[]) => unknown)(...args);
      };
    },
  });
}

function meterNamespace(namespace: DurableObjectNamespace): DurableObjectNamespace {
  return new Proxy(namespace, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (property === "get" || property === "getByName") {
        return (...args: unknown[]) => meterStub((value as (...a: unknown[]) => DurableObjectStub).call(target, ...args));
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** The counts since the last call (cursors still open are counted as far as they were read). */
export function takeMeter(): MeterCounts {
  for (const { query, cursor } of cursors) {
    counts.object_rows_read += cursor.rowsRead;
    counts.object_rows_written += cursor.rowsWritten;
    addWrites("object", query, cursor.rowsWritten);
  }
  cursors = [];
  // Read in the object's own context: another context may not touch its storage.
  counts.objects = touched.size;
  for (const size of touched.values()) counts.object_bytes += size;
  touched = new Map();
  const taken = counts;
  counts = { ...zero(), d1_bytes: taken.d1_bytes, writes_by_statement: {} };
  return taken;
}

/** A session object's SQL storage that counts each statement's rows. */
export function meterSql(sql: SqlStorage): SqlStorage {
  return new Proxy(sql, {
    get(target, property) {
      if (property === "exec") {
        return (query: string, ...bindings: unknown[]) => {
          const cursor = target.exec(query, ...bindings);
          counts.object_queries += 1;
          cursors.push({ query, cursor });
          touched.set(target, target.databaseSize);
          return cursor;
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

type Meta = { rows_read?: number; rows_written?: number; size_after?: number };

function countD1(query: string, meta: Meta | undefined): void {
  counts.d1_queries += 1;
  counts.d1_rows_read += meta?.rows_read ?? 0;
  counts.d1_rows_written += meta?.rows_written ?? 0;
  addWrites("d1", query, meta?.rows_written ?? 0);
  if (meta?.size_after) counts.d1_bytes = meta.size_after;
}

/** The statement each metered statement stands for (`batch` takes only the binding's own), and its SQL. */
const originals = new WeakMap<object, { statement: D1PreparedStatement; query: string }>();

function meterStatement(statement: D1PreparedStatement, query: string): D1PreparedStatement {
  const metered = new Proxy(statement, {
    get(target, property) {
      if (property === "bind") return (...values: unknown[]) => meterStatement(target.bind(...values), query);
      if (property === "run" || property === "all") {
        return async () => {
          const result = await target[property]();
          countD1(query, result.meta as Meta);
          return result;
        };
      }
      if (property === "first" || property === "raw") {
        // Neither answers D1's meta: the statement counts, its rows do not.
        return async (...args: unknown[]) => {
          counts.d1_queries += 1;
          return (target[property] as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  originals.set(metered, { statement, query });
  return metered;
}

/** A D1 binding that counts the rows of each statement and batch it runs. */
export function meterD1(db: D1Database): D1Database {
  return new Proxy(db, {
    get(target, property) {
      if (property === "prepare") return (query: string) => meterStatement(target.prepare(query), query);
      if (property === "batch") {
        return async (statements: D1PreparedStatement[]) => {
          const known = statements.map((statement) => originals.get(statement) ?? { statement, query: "?" });
          const results = await target.batch(known.map((entry) => entry.statement));
          results.forEach((result, index) => {
            countD1(known[index]?.query ?? "?", result.meta as Meta);
          });
          return results;
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
