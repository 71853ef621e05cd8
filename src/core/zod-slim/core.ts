/**
 * `zod/v4/core` as Agentry's bundle has it (wrangler.toml `[alias]`; see classic.ts): all of it
 * but what the bundle never calls and a namespace import would otherwise keep.
 */
export * from "../../../node_modules/zod/v4/core/index.js";
import { leftOut } from "./left-out";

/** Error messages in other languages (260 KB): Agentry's errors are English (zod's default, `en`). */
export const locales = {};
/** zod's schema compiler (32 KB): Agentry parses with the schemas themselves. */
export const compile = leftOut("compile");
export const compileFn = leftOut("compileFn");
export const withParser = leftOut("withParser");
