import { fillPlaceholders, sql } from "drizzle-orm";
import type { Placeholder, Query } from "drizzle-orm";
import { toSnakeCase } from "drizzle-orm/casing";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { drizzle } from "drizzle-orm/sqlite-proxy";
import * as schema from "./schema";

/** A value D1 binds, and JSON carries (statements wait in the session object's outbox as JSON). */
export type SqlValue = string | number | null;

/** A statement as plain data, made now and run on D1 later. */
export type Statement = { sql: string; params: SqlValue[] };

const runsNothing = async (): Promise<never> => {
  throw new Error("db/statements.ts only builds SQL");
};

/**
 * drizzle without a database: it renders SQL for the same schema and casing as `client.ts` and
 * never runs a query. The batch callback is passed too because drizzle-orm 0.45's sqlite-proxy
 * reads `casing` from its third argument only (with two, the columns come out camelCase).
 */
const builder = drizzle(runsNothing, runsNothing, { schema, casing: "snake_case" });

export type Builder = typeof builder;

/** A statement made from values; `sql()` is the text every statement of the template has. */
export type Template<Name extends string> = ((values: Record<Name, SqlValue>) => Statement) & { sql(): string };

const isSqlValue = (value: unknown): value is SqlValue => typeof value === "string" || typeof value === "number" || value === null;

/**
 * A statement template. `build` renders it with drizzle once per isolate, on first use, with
 * named placeholders; each call only fills in the values (drizzle's `fillPlaceholders`), so no
 * SQL is rendered per call.
 */
export function template<Name extends string>(
  build: (b: Builder, p: (name: Name) => Placeholder<Name>) => { toSQL(): Query },
): Template<Name> {
  let query: Query | undefined;
  const rendered = () => {
    query ??= build(builder, (name) => sql.placeholder(name)).toSQL();
    return query;
  };
  const fill = (values: Record<Name, SqlValue>): Statement => {
    const { sql: text, params: placeholders } = rendered();
    const params = fillPlaceholders(placeholders, values);
    if (!params.every(isSqlValue)) throw new TypeError("a statement parameter must be a string, a number or null");
    return { sql: text, params };
  };
  return Object.assign(fill, { sql: () => rendered().sql });
}

/** The value an upsert tried to write to `column` (SQLite's `excluded` row), under `casing: "snake_case"`. */
export const excluded = (column: SQLiteColumn) => sql.raw(`excluded."${column.keyAsName ? toSnakeCase(column.name) : column.name}"`);
