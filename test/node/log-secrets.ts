/**
 * The secrets of the test environment (vitest.config.ts bindings) as the Node side knows them, and a
 * scan of every console line the Worker and the tests write during `npm run test:reliability`
 * (vitest.reliability.config.ts `onConsoleLog`); the reliability reporter reports the tally.
 */
export const TEST_SECRETS = [
  "test-admin-token",
  "test-webhook-secret",
  "YWdlbnRyeS10ZXN0LWNyZWRlbnRpYWxzLWtleS0zMmI=",
  "sk-ant-test-secret-0123456789",
  "sk-openai-test-secret-0123456789",
  "operator-chat-test-secret-0123456789",
  "operator-gateway-test-token-42",
];

/**
 * Part of the session id that test/reliability/log-capture.reliability.ts gives a session whose object
 * logs `session_rebuilt`: a line of the Worker's own, written inside a Durable Object. Seeing it proves
 * that the scan reads the Worker's output, not only the tests'.
 */
export const LOG_CANARY = "reliability-log-canary";

export type LogScan = { lines: number; canaries: number; found: string[] };

/** Shared through globalThis: the config and the reporter are loaded as separate module instances. */
export const logScan = (): LogScan =>
  ((globalThis as { __reliabilityLogScan?: LogScan }).__reliabilityLogScan ??= { lines: 0, canaries: 0, found: [] });

/** Counts the log's lines and records any line holding a secret (the secret itself is not recorded). */
export function scanLog(log: string): void {
  const scan = logScan();
  for (const line of log.split("\n")) {
    if (!line.trim()) continue;
    scan.lines += 1;
    if (line.includes(LOG_CANARY) && line.includes('"event":"session_rebuilt"')) scan.canaries += 1;
    const leaked = TEST_SECRETS.findIndex((secret) => line.includes(secret));
    if (leaked >= 0) scan.found.push(`secret #${leaked} in: ${line.replaceAll(TEST_SECRETS[leaked]!, "<redacted>").slice(0, 200)}`);
  }
}
