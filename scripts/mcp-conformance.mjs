// The MCP conformance suite in client mode with Agentry's MCP client as the client
// (`npm run conformance:mcp [-- scenario …]`; docs/mcp.md, Conformance). Bundles
// probe.ts with esbuild, runs the suite's CLI on Node 22 for each scenario, and prints a table of
// its checks.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const node = join(root, "node_modules/.bin/node");
const work = mkdtempSync(join(tmpdir(), "mcp-conformance-"));
const probe = join(work, "probe.mjs");
execFileSync(join(root, "node_modules/.bin/esbuild"), [
  join(root, "test/conformance/mcp-probe.ts"),
  "--bundle",
  "--platform=node",
  "--format=esm",
  "--target=node22",
  `--outfile=${probe}`,
  "--alias:ajv=./src/mcp/no-ajv.ts",
  "--alias:ajv-formats=./src/mcp/no-ajv-formats.ts",
  "--log-level=warning",
]);

const DEFAULT_SCENARIOS = [
  "initialize",
  "tools_call",
  "auth/metadata-default",
  "auth/metadata-var1",
  "auth/metadata-var2",
  "auth/metadata-var3",
  "auth/scope-from-www-authenticate",
  "auth/scope-from-scopes-supported",
  "auth/scope-omitted-when-undefined",
  "auth/token-endpoint-auth-basic",
  "auth/token-endpoint-auth-post",
  "auth/token-endpoint-auth-none",
  "auth/pre-registration",
  "auth/2025-03-26-oauth-metadata-backcompat",
  "auth/2025-03-26-oauth-endpoint-fallback",
  "auth/resource-mismatch",
  "auth/scope-retry-limit",
  "auth/offline-access-scope",
  "auth/offline-access-not-supported",
  "auth/basic-cimd",
  "auth/scope-step-up",
  "sse-retry",
];
const scenarios = process.argv.length > 2 ? process.argv.slice(2) : DEFAULT_SCENARIOS;
const cli = join(root, "node_modules/@modelcontextprotocol/conformance/dist/index.js");

/** @typedef {{ id: string; status: string; errorMessage?: string }} Check */
const rows = [];
for (const scenario of scenarios) {
  const out = join(work, scenario.replace(/\//g, "_"));
  const run = spawnSync(node, [cli, "client", "--command", `${node} ${probe}`, "--scenario", scenario, "-o", out, "--timeout", "20000"], {
    encoding: "utf8",
    env: { ...process.env, PATH: `${join(root, "node_modules/.bin")}:${process.env.PATH}` },
  });
  /** @type {Check[]} */
  let checks = [];
  try {
    const dir = readdirSync(out, { recursive: true }).find((f) => String(f).endsWith("checks.json"));
    if (dir) checks = JSON.parse(readFileSync(join(out, String(dir)), "utf8"));
  } catch {}
  const counted = (/** @type {string} */ status) => checks.filter((c) => c.status === status).length;
  const failed = checks.filter((c) => c.status === "FAILURE").map((c) => `${c.id}: ${c.errorMessage ?? ""}`.slice(0, 160));
  rows.push({ scenario, exit: run.status, success: counted("SUCCESS"), warning: counted("WARNING"), failure: counted("FAILURE"), failed });
}
console.log("| scenario | exit | success | warning | failure | failed checks |");
console.log("|---|---|---|---|---|---|");
for (const r of rows)
  console.log(`| ${r.scenario} | ${r.exit} | ${r.success} | ${r.warning} | ${r.failure} | ${r.failed.join("; ").replace(/\|/g, "/")} |`);
