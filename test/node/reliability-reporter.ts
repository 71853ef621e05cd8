import { writeFileSync } from "node:fs";
import type { Reporter, TestModule } from "vitest/node";
import { logScan } from "./log-secrets";

/** Where `npm run test:reliability` writes its counts; `npm run reliability:table` renders them. */
export const RESULTS_FILE = "docs/reliability-results.json";

/**
 * Sums the counts each reliability test left in its task meta (`meta.reliability`, a record of
 * category → name → number) and writes them, with the run's duration and outcome, to RESULTS_FILE.
 */
export default class ReliabilityReporter implements Reporter {
  private started = Date.now();

  onTestRunStart(): void {
    this.started = Date.now();
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const counts: Record<string, Record<string, number>> = {};
    let passed = 0;
    let failed = 0;
    let canaryTest = false;
    const failures: string[] = [];
    for (const module of modules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (test.module.moduleId.endsWith("log-capture.reliability.ts") && state === "passed") canaryTest = true;
        if (state === "passed") passed += 1;
        if (state === "failed") {
          failed += 1;
          failures.push(test.fullName);
        }
        const meta = test.meta() as { reliability?: Record<string, Record<string, number>> };
        for (const [category, entries] of Object.entries(meta.reliability ?? {})) {
          counts[category] ??= {};
          const into = counts[category];
          for (const [name, value] of Object.entries(entries)) into[name] = (into[name] ?? 0) + value;
        }
      }
    }
    // The log lines of the whole run (vitest.reliability.config.ts): a secret in one fails the run.
    const scan = logScan();
    counts.secrets ??= {};
    const secrets = counts.secrets;
    secrets.log_lines_scanned = scan.lines;
    secrets.found = (secrets.found ?? 0) + scan.found.length;
    secrets.worker_log_canaries_seen = scan.canaries;
    if (scan.found.length > 0) {
      failures.push(...scan.found);
      process.exitCode = 1;
    }
    // The canary test ran: its object's log line must have reached the scan, or the scan saw only the tests' lines.
    if (canaryTest && scan.canaries === 0) {
      failures.push("log capture: the Durable Object's session_rebuilt line never reached onConsoleLog");
      process.exitCode = 1;
    }
    const results = {
      finished_at: new Date().toISOString(),
      seconds: Math.round((Date.now() - this.started) / 1000),
      tests: { passed, failed },
      failures,
      counts,
    };
    writeFileSync(RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);
  }
}
