// `npm run bench [-- --quick] [-- --out FILE]`: Agentry side by side with a bare SDK loop (scripts/bench,
// docs/performance.md). Exits 1 on a correctness failure, never on a slow figure.
import "./ts-hooks.mjs";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, release, tmpdir, type } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { bareClient } from "./bare-loop.mjs";
import { bundleSize } from "./bundle-size.mjs";
import { directOrigin, wranglerEnv } from "./agentry-server.mjs";
import { startStack } from "./stack.mjs";
import { blast, busyDecision, concurrent, devProxyHop, interleaved, longSession, streaming, TOOL_STEPS } from "./measures.mjs";
import { measureCost } from "./cost.mjs";
import { renderReport } from "./report.mjs";

/** @import { BenchContext } from "./measures.mjs" */
/** @import { BenchFigures, BenchReport, BenchRun } from "./report.mjs" */

const { values: args } = parseArgs({
  options: { quick: { type: "boolean", default: false }, out: { type: "string", default: "BENCHMARKS.md" } },
});
const plan = args.quick
  ? { warmup: 2, runs: 5, busy: 5, blasts: 1, concurrent: [20], turns: 100, streamed: 5, cost: 3 }
  : { warmup: 5, runs: 30, busy: 30, blasts: 10, concurrent: [20, 200], turns: 500, streamed: 30, cost: 10 };

const load = () =>
  loadavg()
    .map((v) => v.toFixed(2))
    .join(" ");
/** @param {string} what */
const step = (what) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${what}`);
const machine = {
  nproc: cpus().length,
  cpu: cpus()[0]?.model.trim() ?? "unknown CPU",
  os: `${type()} ${release()}`,
  node: process.version,
  wrangler: spawnSync("wrangler", ["--version"], { env: wranglerEnv, encoding: "utf8" }).stdout.trim().split("\n").at(-1),
  loadStart: load(),
  loadEnd: "",
};
const dir = mkdtempSync(join(tmpdir(), "agentry-bench-"));
/** @type {string[]} */
const failures = [];
/** @type {BenchRun & Partial<BenchFigures>} */
const report = {
  command: `npm run bench${args.quick ? " -- --quick" : ""}`,
  date: `${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC`,
  quick: args.quick,
  machine,
  steps: TOOL_STEPS,
  runs: plan.runs,
  warmup: plan.warmup,
  failures,
  notes: [],
};
/**
 * Whether every figure the report shows was measured (the bundle is measured first).
 * @param {BenchRun & Partial<BenchFigures>} r
 * @returns {r is BenchReport}
 */
const complete = (r) => Boolean(r.bundle && r.series && r.busy && r.blast && r.concurrent && r.streaming && r.long && r.cost);

/** @type {Awaited<ReturnType<typeof startStack>> | null} */
let stack = null;
try {
  step(`machine: ${machine.nproc} cores, load ${machine.loadStart}; temporary state in ${dir}`);
  step("bundle: wrangler deploy --dry-run");
  report.bundle = bundleSize(join(dir, "dist"));
  stack = await startStack(dir, { onStep: step });
  const { provider, agentry, tenant, agentId } = stack;
  /** @type {BenchContext} */
  const ctx = { failures, provider, agentry, tenant, agentId, bare: bareClient(provider.origin) };

  report.series = [];
  for (const latency of [0, 20]) {
    step(`tool runs, L = ${latency} ms: ${plan.warmup} + ${plan.runs} each, interleaved`);
    report.series.push(await interleaved(ctx, latency, plan.warmup, plan.runs));
  }
  step("409 on a busy session");
  report.busy = await busyDecision(ctx, plan.busy);
  ctx.direct = await directOrigin(agentry);
  if (ctx.direct) {
    step(`the same, and GET /health, straight to the Worker's socket (${ctx.direct}) and through wrangler dev's proxy`);
    report.busyDirect = await busyDecision(ctx, plan.busy, tenant.at(ctx.direct));
    report.hop = await devProxyHop({ ...ctx, direct: ctx.direct }, plan.busy);
  }
  step(`${plan.blasts} blasts of 100 turns on one session`);
  report.blast = await blast(ctx, plan.blasts, 100);
  report.concurrent = [];
  for (const count of plan.concurrent) {
    step(`${count} tool runs at once`);
    report.concurrent.push(await concurrent(ctx, count, 20));
  }
  step("streamed turns: first token, reconnect");
  report.streaming = await streaming(ctx, plan.streamed);
  step(`one session, ${plan.turns} turns`);
  report.long = await longSession(ctx, plan.turns);
  await stack.stop();
  step("what a run costs: Agentry again, with its storage meter on");
  mkdirSync(join(dir, "cost"));
  stack = await startStack(join(dir, "cost"), { onStep: step, vars: { STORAGE_METER: "1" } });
  report.cost = [];
  for (const kind of /** @type {const} */ (["blocking", "streamed", "background"])) {
    step(`${plan.cost} ${kind} runs, metered`);
    report.cost.push(await measureCost(stack, kind, plan.cost));
  }
} catch (error) {
  failures.push(`the bench stopped: ${error instanceof Error ? error.message : String(error)}`);
  console.error(error);
} finally {
  await stack?.stop();
}

machine.loadEnd = load();
if (complete(report)) {
  if (args.quick) report.notes.push("--quick: 200 runs at once and turn 500 are skipped.");
  report.notes.push(
    "Agentry is called with a tenant key (authentication reads D1, as for any client) and every tool run is a new session.",
    "Runtime CPU is the whole wrangler process group: workerd (the Worker, Durable Objects and local D1), wrangler's Node process (it proxies requests and prints the Worker's log lines) and esbuild.",
    "Whole-run times are client-side (Node's fetch to 127.0.0.1); before / gaps / after come from the fake provider's clock, in the same process.",
  );
  if (Number(machine.loadStart.split(" ")[0]) > machine.nproc / 2) {
    report.notes.push(
      `The machine was busy (load ${machine.loadStart} on ${machine.nproc} cores): every Agentry figure is inflated by it, the bare loop's much less.`,
    );
  }
  const markdown = renderReport(report);
  writeFileSync(args.out, markdown);
  console.log(`\n${markdown}`);
  step(`wrote ${args.out}`);
  rmSync(dir, { recursive: true, force: true });
} else {
  console.error(`The bench did not finish; wrangler's log and state are kept in ${dir}`);
}
if (failures.length > 0) {
  console.error(`\n${failures.length} correctness failure(s):\n${failures.map((f) => `  - ${f}`).join("\n")}`);
  process.exit(1);
}
process.exit(0);
