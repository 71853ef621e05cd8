import { defineConfig, mergeConfig } from "vitest/config";
import base from "./vitest.config";

/**
 * `npm run test:reliability` (issue 14): the same workerd pool and bindings as `npm test`, but only
 * the reliability suite (`test/reliability/*.reliability.ts`, a name `npm test` does not pick up);
 * its counts go to `reliability-results.json` through the results reporter.
 */
export default mergeConfig(
  base,
  defineConfig({
    test: {
      include: ["test/reliability/**/*.reliability.ts"],
      testTimeout: 300_000,
      reporters: ["default", "./test/node/reliability-reporter.ts"],
    },
  }),
);
