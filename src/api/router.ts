import { OpenAPIHono } from "@hono/zod-openapi";
import type { Env } from "../env";
import { fieldsOf, invalidFields } from "./errors";

/** Hono context variables set by the auth middleware. */
export type AppEnv = {
  Bindings: Env;
  Variables: { tenant: string; isAdmin: boolean; tokenId: string };
};

/**
 * A sub-router whose zod validation failures become `400 invalid_request` with
 * `details.fields` naming each path.
 */
export const newRouter = () =>
  new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) {
        const prefix = result.target === "json" ? [] : [result.target === "param" ? "path" : result.target];
        throw invalidFields(fieldsOf(result.error, prefix));
      }
    },
  });

/** Re-used bearer security scheme for the OpenAPI document. */
export const bearerSecurity = [{ bearerAuth: [] }];
