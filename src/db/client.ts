import { drizzle } from "drizzle-orm/d1";
import * as schema from "./schema";

/** A drizzle client over D1 with the same snake_case mapping drizzle-kit used for the migrations. */
export const database = (d1: D1Database) => drizzle(d1, { schema, casing: "snake_case" });

export type Database = ReturnType<typeof database>;
