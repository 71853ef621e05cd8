import { z } from "@hono/zod-openapi";
import { invalidFields } from "./errors";
import { decodeBase64Url, encodeBase64Url } from "../core/base64";
import type { Cursor } from "../core/cursor";

/** `limit` and `cursor` of every list (docs/api.md: newest first, limit 20 by default, at most 100). */
export const pageQuery = {
  limit: z.coerce.number().int().min(1).max(100).default(20).openapi({ example: 20 }),
  cursor: z.string().min(1).max(512).optional(),
};

/** The query of a list route: `limit`, `cursor` and its filters; any other parameter is a 400 naming it. */
export const listQuery = <T extends z.ZodRawShape>(filters: T) => z.strictObject({ ...pageQuery, ...filters });

export function encodeCursor(row: Cursor): string {
  return encodeBase64Url(new TextEncoder().encode(JSON.stringify([row.createdAt, row.id])));
}

const cursorShape = z.tuple([z.string(), z.string()]);

export function decodeCursor(cursor: string | undefined): Cursor | null {
  if (cursor === undefined) return null;
  try {
    const json: unknown = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(decodeBase64Url(cursor)));
    const [createdAt, id] = cursorShape.parse(json);
    return { createdAt, id };
  } catch {
    throw invalidFields([{ path: "query.cursor", message: "not a cursor from a previous page" }]);
  }
}

/** Builds `{ data, next_cursor }` from `limit + 1` rows fetched newest first. */
export function page<Row extends Cursor, Out>(rows: Row[], limit: number, render: (row: Row) => Out) {
  const more = rows.length > limit;
  const shown = more ? rows.slice(0, limit) : rows;
  const last = shown[shown.length - 1];
  return { data: shown.map(render), next_cursor: more && last ? encodeCursor(last) : null };
}

export const listSchema = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item), next_cursor: z.string().nullable() });
