import type { Context } from "hono";
import { z as openapiZ } from "@hono/zod-openapi";
import { z } from "zod";
import { nowIso } from "../core/ids";
import { deleteIdempotencyKey, findIdempotencyKey, insertIdempotencyKey, setIdempotencyResult } from "../db/idempotency-keys";
import { hashToken } from "./auth";
import { ApiError, invalidFields } from "./errors";
import type { AppEnv } from "./router";
import { parseStored } from "../core/json-depth";

/** docs/api.md: the same key with the same body within 24 hours returns the first answer again. */
const KEY_LIFETIME_MS = 24 * 60 * 60 * 1000;
const keyHeader = z.string().min(1).max(255);

/**
 * The `Idempotency-Key` request header, for the OpenAPI document only: `keyOf` checks it, so the
 * schema itself never rejects (its 400 names `headers.idempotency-key` the same way everywhere).
 */
export const idempotencyKeyHeaders = openapiZ.object({
  "idempotency-key": openapiZ.string().optional().openapi({
    minLength: 1,
    maxLength: 255,
    description:
      "Retrying with the same key and body within 24 hours answers the first answer again; another body answers 409 idempotency_conflict",
  }),
});

type Claim = { replay: boolean; result: unknown };

function keyOf(c: Context<AppEnv>): string | null {
  const raw = c.req.header("idempotency-key");
  if (raw === undefined) return null;
  const parsed = keyHeader.safeParse(raw);
  if (!parsed.success) throw invalidFields([{ path: "headers.idempotency-key", message: "must be 1 to 255 characters" }]);
  return parsed.data;
}

/**
 * Claims `key` for this request in D1, atomically (the row's primary key): the first request
 * stores `result`; a later one with the same method, path and body gets the first one's
 * result back; with another body, `409 idempotency_conflict`.
 */
async function claim(c: Context<AppEnv>, key: string, body: unknown, result: unknown): Promise<Claim> {
  const db = c.env.DB;
  const tenant = c.get("tenant");
  const fingerprint = await hashToken(`${c.req.method} ${c.req.path}\n${JSON.stringify(body)}`);
  for (let attempt = 0; attempt < 2; attempt++) {
    const inserted = await insertIdempotencyKey(db, { tenant, key, fingerprint, result: JSON.stringify(result), createdAt: nowIso() });
    if (inserted) return { replay: false, result };
    const row = await findIdempotencyKey(db, tenant, key);
    if (!row) continue;
    if (Date.now() - Date.parse(row.createdAt) > KEY_LIFETIME_MS) {
      await deleteIdempotencyKey(db, tenant, key, row.createdAt);
      continue;
    }
    if (row.fingerprint !== fingerprint) {
      throw new ApiError("idempotency_conflict", "This Idempotency-Key was used with a different request", { idempotency_key: key });
    }
    // Written by this module from JSON.stringify of a plan or a response.
    return { replay: true, result: row.result === null ? null : parseStored<unknown>(row.result) };
  }
  throw new ApiError("idempotency_conflict", "This Idempotency-Key is being claimed by another request", { idempotency_key: key });
}

/**
 * What a request with the same `Idempotency-Key` and body stored, without claiming the key: null
 * when there is no such request yet (or no key). Lets a route find what the first request did
 * before it decides what this one is.
 */
export async function priorResult(c: Context<AppEnv>, body: unknown): Promise<unknown> {
  const key = keyOf(c);
  if (key === null) return null;
  const fingerprint = await hashToken(`${c.req.method} ${c.req.path}\n${JSON.stringify(body)}`);
  const row = await findIdempotencyKey(c.env.DB, c.get("tenant"), key);
  if (!row || row.fingerprint !== fingerprint || row.result === null || Date.now() - Date.parse(row.createdAt) > KEY_LIFETIME_MS)
    return null;
  return parseStored<unknown>(row.result);
}

/**
 * For runs: the ids a request will create are chosen up front and claimed with the key, so a
 * retried POST addresses the same run (the Session object answers an existing run id again).
 * Returns the plan to use: this request's, or the first request's.
 */
export async function idempotentPlan<P>(
  c: Context<AppEnv>,
  body: unknown,
  plan: P,
  schema: z.ZodType<P>,
): Promise<{ plan: P; replay: boolean }> {
  const key = keyOf(c);
  if (key === null) return { plan, replay: false };
  const claimed = await claim(c, key, body, plan);
  return claimed.replay ? { plan: schema.parse(claimed.result), replay: true } : { plan, replay: false };
}

const storedResponse = z.object({ body: z.record(z.string(), z.unknown()) });

/**
 * For agents and keys: the first answer is stored and returned again to a retry. A request
 * that fails gives its key back, so a retry runs it again. `stored` is what a retry gets:
 * a key's secret is shown once and never stored.
 */
export async function idempotentCreate<T extends object>(
  c: Context<AppEnv>,
  body: unknown,
  create: () => Promise<{ body: T; stored?: T }>,
): Promise<T> {
  const key = keyOf(c);
  if (key === null) return (await create()).body;
  const claimed = await claim(c, key, body, null);
  if (claimed.replay) {
    const previous = storedResponse.safeParse(claimed.result);
    if (!previous.success)
      throw new ApiError("idempotency_conflict", "The first request with this Idempotency-Key is still being processed");
    // Stored by this function from the first answer's `T`.
    return previous.data.body as T;
  }
  const tenant = c.get("tenant");
  try {
    const created = await create();
    await setIdempotencyResult(c.env.DB, tenant, key, JSON.stringify({ body: created.stored ?? created.body }));
    return created.body;
  } catch (error) {
    await deleteIdempotencyKey(c.env.DB, tenant, key);
    throw error;
  }
}
