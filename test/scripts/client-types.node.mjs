// client/openapi.d.ts (the typed client's types) is what `npm run client:types` writes from the current OpenAPI document.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { clientTypes } from "../../scripts/client-types.mjs";

test("client/openapi.d.ts is up to date (npm run client:types)", () => {
  const committed = readFileSync(new URL("../../client/openapi.d.ts", import.meta.url), "utf8");
  assert.ok(committed === clientTypes(), "client/openapi.d.ts is out of date: run `npm run client:types`");
});
