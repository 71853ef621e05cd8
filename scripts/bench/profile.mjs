// `npm run bench:profile [-- --runs 30] [-- --latency 20]`: a V8 CPU profile of Agentry's isolate (the
// Worker and its Durable Objects, in workerd) over tool runs of the bench, taken through workerd's
// inspector. Prints where the isolate's time goes (self time by function and by package) and writes the
// whole profile (open it in Chrome DevTools, Performance tab) to agentry.cpuprofile in the temp folder.
import "./ts-hooks.mjs";
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { runTurn } from "./agentry-client.mjs";
import { freePort } from "./agentry-server.mjs";
import { TOOL_INPUT } from "./measures.mjs";
import { startStack } from "./stack.mjs";

/**
 * @typedef {object} CpuProfile A V8 CPU profile (CDP's Profiler.Profile), the fields read here.
 * @property {{ id: number, callFrame: { functionName: string, url: string, lineNumber: number } }[]} nodes
 * @property {number[]} samples node ids
 * @property {number[]} timeDeltas microseconds
 */
/** @typedef {{ profile?: CpuProfile }} CdpResult What this script reads of a CDP reply's `result` (Profiler.stop's). */

const { values: args } = parseArgs({
  options: {
    runs: { type: "string", default: "30" },
    latency: { type: "string", default: "20" },
    warmup: { type: "string", default: "5" },
  },
});
const runs = Number(args.runs);
const dir = mkdtempSync(join(tmpdir(), "agentry-profile-"));
/** @param {string} what */
const step = (what) => console.log(`[profile ${new Date().toISOString().slice(11, 19)}] ${what}`);

/**
 * A Chrome DevTools Protocol session over the inspector's WebSocket.
 * @param {number} port
 */
async function inspect(port) {
  /** @type {{ webSocketDebuggerUrl?: string, title?: string, url?: string }[]} */
  const targets = await (await fetch(`http://127.0.0.1:${port}/json`)).json();
  const target = targets.find((t) => t.webSocketDebuggerUrl);
  if (!target?.webSocketDebuggerUrl) throw new Error(`no inspector target on port ${port}: ${JSON.stringify(targets)}`);
  // wrangler's inspector proxy accepts only DevTools' origin (and localhost ones). Node's WebSocket (undici's) takes
  // `headers`; the DOM's type of the global does not know that option, undici's does.
  const NodeWebSocket = /** @type {typeof import("undici-types").WebSocket} */ (WebSocket);
  const socket = new NodeWebSocket(target.webSocketDebuggerUrl, { headers: { origin: "https://devtools.devprod.cloudflare.dev" } });
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = reject;
  });
  let id = 0;
  /** @type {Map<number, { resolve: (result: CdpResult | undefined) => void, reject: (error: Error) => void }>} */
  const pending = new Map();
  socket.onmessage = (message) => {
    /** @type {{ id?: number, result?: CdpResult, error?: unknown }} */
    const reply = JSON.parse(String(message.data));
    if (reply.id === undefined) return;
    const entry = pending.get(reply.id);
    pending.delete(reply.id);
    if (reply.error) entry?.reject(new Error(`${JSON.stringify(reply.error)}`));
    else entry?.resolve(reply.result);
  };
  return {
    target: target.title ?? target.url,
    /**
     * @param {string} method
     * @param {Record<string, unknown>} [params]
     * @returns {Promise<CdpResult | undefined>}
     */
    send: (method, params = {}) =>
      new Promise((resolve, reject) => {
        id += 1;
        pending.set(id, { resolve, reject });
        socket.send(JSON.stringify({ id, method, params }));
      }),
    close: () => socket.close(),
  };
}

/**
 * Where each line of the bundle wrangler dev runs comes from: esbuild heads every module with a
 * `// path` comment (unminified). Read while wrangler runs: it removes its temporary folder on exit.
 */
function bundleModules() {
  const root = ".wrangler/tmp";
  const dirs = readdirSync(root)
    .filter((d) => d.startsWith("dev-"))
    .map((d) => join(root, d, "index.js"));
  const newest = dirs.filter((f) => statSync(f, { throwIfNoEntry: false })).sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  if (!newest) return () => null;
  /** @type {[line: number, module: string][]} */
  const starts = [];
  readFileSync(newest, "utf8")
    .split("\n")
    .forEach((line, i) => {
      const module = /^\/\/ ((?:src|node_modules)\/\S+)$/.exec(line)?.[1];
      if (module) starts.push([i, module]);
    });
  /** @param {number} line */
  return (line) => {
    /** @type {string | null} */
    let found = null;
    for (const [start, module] of starts) {
      if (start > line) break;
      found = module;
    }
    return found;
  };
}

/**
 * Self time (ms) by function and by package from a V8 profile; `moduleOf(line)` names the bundle's source module.
 * @param {CpuProfile} profile
 * @param {(line: number) => string | null} moduleOf
 */
function selfTimes(profile, moduleOf) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  /** @type {Map<number, number>} */
  const self = new Map();
  for (const [i, sample] of profile.samples.entries()) {
    const us = profile.timeDeltas[i + 1] ?? 0;
    self.set(sample, (self.get(sample) ?? 0) + us / 1000);
  }
  /** @type {Map<string, number>} */
  const byFunction = new Map();
  /** @type {Map<string, number>} */
  const byPackage = new Map();
  for (const [nodeId, ms] of self) {
    const node = byId.get(nodeId);
    if (!node) throw new Error(`the profile has a sample of node ${nodeId} and no such node`);
    const { functionName, url, lineNumber } = node.callFrame;
    const module = url.endsWith("index.js") ? moduleOf(lineNumber) : null;
    const where = module ?? (url ? `${url.split("/").slice(-2).join("/")}:${lineNumber + 1}` : "");
    const name = `${functionName || "(anonymous)"} ${where}`.trim();
    byFunction.set(name, (byFunction.get(name) ?? 0) + ms);
    const pkg = module
      ? (/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(module)?.[1] ?? module.split("/").slice(0, 2).join("/"))
      : url.startsWith("cloudflare-internal:") || url.startsWith("node-internal:")
        ? "workerd built-ins"
        : functionName.startsWith("(")
          ? functionName
          : "native (SQLite, fetch, timers …)";
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + ms);
  }
  /** @param {Map<string, number>} map @param {number} n */
  const top = (map, n) => [...map].sort((a, b) => b[1] - a[1]).slice(0, n);
  return { byFunction: top(byFunction, 30), byPackage: top(byPackage, 15) };
}

/** @type {Awaited<ReturnType<typeof startStack>> | null} */
let stack = null;
let failed = false;
try {
  const inspectorPort = await freePort();
  const started = await startStack(dir, { inspectorPort, onStep: step });
  stack = started;
  started.provider.setLatency(Number(args.latency));
  /** @param {string} label */
  const check = async (label) => {
    const turn = await runTurn(started.tenant, started.agentId, TOOL_INPUT);
    if (turn.status !== 200 || turn.run?.status !== "completed")
      throw new Error(`${label}: HTTP ${turn.status} ${JSON.stringify(turn.run ?? turn.error).slice(0, 300)}`);
    return turn.endedAt - turn.startedAt;
  };
  for (let i = 0; i < Number(args.warmup); i += 1) await check(`warm-up run ${i + 1}`);
  const session = await inspect(inspectorPort);
  step(`profiling ${session.target}: ${runs} tool runs at L = ${args.latency} ms`);
  await session.send("Profiler.enable");
  await session.send("Profiler.setSamplingInterval", { interval: 200 });
  await session.send("Profiler.start");
  /** @type {number[]} */
  const times = [];
  for (let i = 0; i < runs; i += 1) times.push(await check(`run ${i + 1}`));
  const profile = (await session.send("Profiler.stop"))?.profile;
  session.close();
  if (!profile) throw new Error("Profiler.stop answered no profile");
  const moduleOf = bundleModules();
  const file = join(dir, "agentry.cpuprofile");
  writeFileSync(file, JSON.stringify(profile));
  const { byFunction, byPackage } = selfTimes(profile, moduleOf);
  /** @param {number} ms */
  const perRun = (ms) => (ms / runs).toFixed(2).padStart(8);
  console.log(
    `\nmedian run ${(times.sort((a, b) => a - b)[Math.floor(times.length / 2)] ?? Number.NaN).toFixed(1)} ms; self time per run (ms), by package or src/ folder:`,
  );
  for (const [name, ms] of byPackage) console.log(`${perRun(ms)}  ${name}`);
  console.log("\nby function:");
  for (const [name, ms] of byFunction) console.log(`${perRun(ms)}  ${name}`);
  step(`profile written to ${file}`);
} catch (error) {
  failed = true;
  console.error(error);
} finally {
  await stack?.stop();
}
process.exit(failed ? 1 : 0);
