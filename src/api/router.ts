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
 * `details.fields` naming each path (`body` for a JSON body that is not an object).
 */
export const newRouter = () =>
  new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) {
        const prefix = result.target === "json" ? [] : [result.target === "param" ? "path" : result.target];
        // A body that is not an object at all (`[]`, `"x"`, `null`) fails at the root: name it "body".
        throw invalidFields(fieldsOf(result.error, prefix).map((field) => (field.path ? field : { ...field, path: "body" })));
      }
    },
  });

/** Re-used bearer security scheme for the OpenAPI document. */
export const bearerSecurity = [{ bearerAuth: [] }];
