/**
 * `zod` as Agentry's bundle has it (wrangler.toml `[alias]` maps `zod` and `zod/v4` here, and
 * `zod/v4/core` to core.ts). `@hono/zod-openapi` passes the `z` namespace to
 * `extendZodWithOpenApi` as a value, so the bundler keeps every export of it; these modules are
 * zod's own with the exports Agentry never uses replaced (a local export wins over `export *`),
 * which keeps about 300 KB out of the bundle (docs/performance.md, Bundle). Types and tests
 * use zod itself.
 */
export * from "../../../node_modules/zod/v4/classic/external.js";
import { leftOut } from "./left-out";

export * as core from "./core";
export { compile, withParser } from "./core";
/** Error messages in other languages: Agentry's errors are English (zod's default, `en`). */
export const locales = {};
/** JSON Schema to zod (12 KB): Agentry validates JSON Schema with @cfworker/json-schema. */
export const fromJSONSchema = leftOut("fromJSONSchema");

import * as z from "./classic";
export { z, z as default };
