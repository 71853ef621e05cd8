import { createMiddleware } from "hono/factory";
import { jsonDepthExcess, MAX_JSON_DEPTH } from "../core/json-depth";
import { invalidFields } from "./errors";
import type { AppEnv } from "./router";

/**
 * Refuses a JSON body that nests deeper than MAX_JSON_DEPTH levels (the body object is level 1)
 * with a 400 naming the top-level field, before any validator or store sees it. The text is
 * read through Hono's body cache, so the route's validator reads it again without a second
 * read of the stream.
 */
export const jsonDepthGuard = createMiddleware<AppEnv>(async (c, next) => {
  const type = c.req.header("content-type") ?? "";
  if (c.req.raw.body === null || !/^application\/([a-z0-9.+-]*\+)?json/i.test(type.trim())) return next();
  const text = await c.req.text();
  const path = jsonDepthExcess(text);
  if (path) {
    const [field] = path;
    const message = `nests deeper than ${MAX_JSON_DEPTH} levels, the limit of every JSON input`;
    throw invalidFields([{ path: field === undefined ? "body" : String(field), message }], `${field ?? "body"} ${message}`);
  }
  await next();
});
