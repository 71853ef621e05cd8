import { defineConfig, mergeConfig } from "vitest/config";
import base from "./vitest.config";
import { scanLog } from "./test/node/log-secrets";

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
      // The soak's long mode (test/reliability/soak.reliability.ts): RELIABILITY_SOAK_MINUTES=10; 0 skips it.
      provide: { soakMinutes: Number(process.env.RELIABILITY_SOAK_MINUTES ?? 0) },
      reporters: ["default", "./test/node/reliability-reporter.ts"],
      // Every console line (the Worker's structured logs and the tests') is scanned for secrets, then dropped:
      // thousands of runs' logs would bury the results (a failing test still shows its error).
      silent: false,
      onConsoleLog: (log: string) => {
        scanLog(log);
        return false;
      },
    },
  }),
);
