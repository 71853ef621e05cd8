// `npm run reliability:crash` (issue 14): SIGKILL of the local runtime (`npm start`, i.e. wrangler dev and
// its workerd) in the middle of a run, then a restart. CRASHES runs (default 5, env RELIABILITY_CRASHES), each
// a three-step run (webhook `first`, webhook `second` held at a gate, then the answer) killed while
// `second` is in flight. After each restart the run must complete once with its exact output, six
// transcript rows, events with consecutive seq, each tool counted once by Idempotency-Key (the call in
// flight at the kill re-sent with the same key), and the session must take the next turn. Adds its counts
// (faults: injected_sigkill_runtime / survived_sigkill_runtime) to docs/reliability-results.json, and scans every
// line the runtime wrote for the secrets of .dev.vars (secrets: runtime_log_lines_scanned).
import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import "./bench/ts-hooks.mjs";

/** @import { ChildProcess } from "node:child_process" */
/** @import { Server } from "node:http" */
/** @import { Readable } from "node:stream" */
/** @import { ReliabilityResults } from "./reliability-table.mjs" */

// The tests' servers import their siblings without an extension: loaded once ts-hooks.mjs resolves them.
const { startToolServer } = await import("../test/node/tool-server.ts");

const CRASHES = Number(process.env.RELIABILITY_CRASHES ?? 5);
const PORT = process.env.RELIABILITY_CRASH_PORT ?? "8799";
const BASE = `http://127.0.0.1:${PORT}`;
const RESULTS = "docs/reliability-results.json";

/**
 * Serves a fetch handler on 127.0.0.1 (a random port), as the vitest global setup does.
 * @param {(request: Request) => Promise<Response>} handler
 * @returns {Promise<Server>}
 */
function serveFetch(handler) {
  const server = createServer(async (req, res) => {
    /** @type {Buffer[]} */
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = req.method === "GET" || req.method === "HEAD" ? undefined : Buffer.concat(chunks);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) headers.append(name, String(value));
    const response = await handler(new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers, body }));
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

const adminToken = () => /^ADMIN_TOKEN=(.*)$/m.exec(readFileSync(".dev.vars", "utf8"))?.[1]?.trim();

/**
 * @typedef {object} ApiBody The fields this script reads of Agentry's JSON answers (each endpoint has some of them).
 * @property {string} [id] the agent's id
 * @property {string} [run_id]
 * @property {string} [status] the run's status
 * @property {string} [output]
 * @property {{ role: string, seq: number, type: string }[]} [data] transcript rows, or events
 */
/**
 * @typedef {object} ToolCall A call the tool server recorded.
 * @property {{ name: string }} body
 * @property {string} idempotency_key
 */

/**
 * @param {string} path
 * @param {{ method?: string, body?: unknown }} [init]
 * @returns {Promise<{ status: number, body: ApiBody | null }>}
 */
async function api(path, init = {}) {
  const response = await fetch(`${BASE}${path}`, {
    method: init.method ?? (init.body ? "POST" : "GET"),
    headers: { authorization: `Bearer ${adminToken()}`, "content-type": "application/json" },
    body: init.body ? JSON.stringify(init.body) : undefined,
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

/**
 * Every line the runtime writes (wrangler's and the Worker's console), scanned for the local secrets of
 * .dev.vars as `npm start` uses them: a line holding one fails the run, as in the vitest suite's log scan.
 */
/** @type {{ lines: number, workerLines: number, found: string[] }} */
const runtimeLog = { lines: 0, workerLines: 0, found: [] };
const devSecrets = () =>
  [...readFileSync(".dev.vars", "utf8").matchAll(/^\s*[A-Z_]+\s*=\s*(.+?)\s*$/gm)].flatMap((m) =>
    m[1] !== undefined && m[1].length >= 8 ? [m[1]] : [],
  );

/** @param {Readable} stream */
function scanRuntimeOutput(stream) {
  let rest = "";
  stream.setEncoding("utf8");
  stream.on("data", (/** @type {string} */ chunk) => {
    const lines = (rest + chunk).split("\n");
    rest = lines.pop() ?? "";
    const secrets = existsSync(".dev.vars") ? devSecrets() : [];
    for (const line of lines) {
      if (!line.trim()) continue;
      runtimeLog.lines += 1;
      if (line.includes('"event":"run_')) runtimeLog.workerLines += 1;
      const leaked = secrets.find((secret) => line.includes(secret));
      if (leaked) runtimeLog.found.push(line.replaceAll(leaked, "<redacted>").slice(0, 200));
    }
  });
}

/** Starts `npm start` in its own process group (so that a SIGKILL takes wrangler and workerd with it) and waits until it answers. */
async function startRuntime() {
  const child = spawn("npm", ["start"], { detached: true, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, PORT } });
  scanRuntimeOutput(child.stdout);
  scanRuntimeOutput(child.stderr);
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`npm start exited with code ${child.exitCode} before it answered`);
    try {
      if ((await fetch(`${BASE}/v1/health`)).status < 500) return child;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  killGroup(child);
  throw new Error("npm start did not answer within 120 s");
}

/**
 * SIGKILL to the child's whole process group (it was spawned detached: its pid is the group's id).
 * @param {ChildProcess} child
 */
function killGroup(child) {
  if (child.pid === undefined) throw new Error("npm start has no pid");
  process.kill(-child.pid, "SIGKILL");
}

/** @param {ChildProcess} child */
const kill = (child) => {
  killGroup(child);
  /** @type {Promise<void>} */
  const exited = new Promise((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve() : child.once("exit", () => resolve()),
  );
  return exited;
};

/**
 * @param {unknown} condition
 * @param {string} message
 * @returns {asserts condition}
 */
function check(condition, message) {
  if (!condition) throw new Error(`crash run: ${message}`);
}

/**
 * @param {string} toolUrl
 * @param {string} bucket
 * @returns {Promise<ToolCall[]>}
 */
async function calls(toolUrl, bucket, count = 0) {
  return (await fetch(`${toolUrl}/calls/${bucket}?count=${count}`)).json();
}

/**
 * @param {string} toolUrl
 * @param {number} round
 */
async function crashOnce(toolUrl, round) {
  const bucket = crypto.randomUUID();
  /** @param {string} name @param {string} action */
  const webhook = (name, action) => ({
    type: "webhook",
    name,
    parameters: { type: "object", properties: {} },
    url: `${toolUrl}/${action}/${bucket}`,
  });
  let runtime = await startRuntime();
  try {
    const agent = await api("/v1/agents", {
      body: { name: `crash ${round}`, provider: "mock", model: "mock-1", tools: [webhook("first", "echo"), webhook("second", "gate")] },
    });
    check(agent.status === 201, `create agent: ${agent.status} ${JSON.stringify(agent.body)}`);
    const sessionId = `crash-${crypto.randomUUID()}`;
    const agentId = agent.body?.id;
    const started = await api(`/v1/agents/${agentId}/runs`, {
      body: { input: "[[tool first {}]] [[tool second {}]] go", session_id: sessionId, background: true },
    });
    check(started.status === 202, `start run: ${started.status} ${JSON.stringify(started.body)}`);
    await calls(toolUrl, bucket, 2); // `second` is in flight, held at the gate
    await kill(runtime);
    await fetch(`${toolUrl}/open/${bucket}`, { method: "POST" });
    runtime = await startRuntime();
    const runId = started.body?.run_id;
    /** @type {ApiBody | null} */
    let run;
    const deadline = Date.now() + 90_000;
    do run = (await api(`/v1/agents/${agentId}/runs/${runId}?wait=20`)).body;
    while ((run?.status === "pending" || run?.status === "running") && Date.now() < deadline);
    check(run?.status === "completed", `run ${runId} ended ${run?.status}`);
    check(run.output === 'You said: go\nfirst returned: {"echo":{}}\nsecond returned: gate opened', `output ${JSON.stringify(run.output)}`);
    const transcript = (await api(`/v1/sessions/${sessionId}/transcript`)).body?.data ?? [];
    check(
      JSON.stringify(transcript.map((m) => m.role)) === JSON.stringify(["user", "assistant", "tool", "assistant", "tool", "assistant"]),
      `transcript ${transcript.map((m) => m.role)}`,
    );
    const received = await calls(toolUrl, bucket);
    /** @type {Map<string, Set<string>>} */
    const keys = new Map();
    for (const call of received) keys.set(call.body.name, new Set([...(keys.get(call.body.name) ?? []), call.idempotency_key]));
    check(
      [...keys.keys()].sort().join() === "first,second" && [...keys.values()].every((k) => k.size === 1),
      `tool calls by key ${JSON.stringify(received.map((c) => [c.body.name, c.idempotency_key]))}`,
    );
    const events = (await api(`/v1/agents/${agentId}/runs/${runId}/events`)).body?.data ?? [];
    const firstSeq = events[0]?.seq ?? 0;
    check(
      events.every((e, i) => e.seq === firstSeq + i) && events.at(-1)?.type === "run_completed",
      `event seqs ${events.map((e) => e.seq)}`,
    );
    const next = await api(`/v1/agents/${agentId}/runs`, { body: { input: "next turn", session_id: sessionId } });
    check(next.status === 200 && next.body?.status === "completed", `next turn: ${next.status}`);
  } finally {
    await kill(runtime);
  }
}

// `npm start` writes .dev.vars when there is none; one it wrote for this script is removed again at the end
// (vitest reads .dev.vars too).
const devVarsBefore = existsSync(".dev.vars");
const toolServer = await startToolServer(serveFetch);
const toolAddress = toolServer.address();
if (toolAddress === null || typeof toolAddress === "string") throw new Error("the tool server has no port");
const toolUrl = `http://127.0.0.1:${toolAddress.port}`;
const started = Date.now();
let survived = 0;
/** @type {string | null} */
let failure = null;
try {
  for (let round = 0; round < CRASHES; round++) {
    await crashOnce(toolUrl, round);
    survived += 1;
    console.log(`crash ${round + 1}/${CRASHES}: the run completed after the restart`);
  }
  // The Worker's own lines (run_started, run_finished) must have reached the scan, or it proved nothing.
  check(runtimeLog.workerLines >= 2 * CRASHES, `only ${runtimeLog.workerLines} Worker log lines reached the scan of the runtime's output`);
  check(runtimeLog.found.length === 0, `a secret of .dev.vars in the runtime's output: ${runtimeLog.found.join(" | ")}`);
} catch (error) {
  failure = error instanceof Error ? error.message : String(error);
  console.error(failure);
  process.exitCode = 1;
} finally {
  toolServer.close();
  if (!devVarsBefore) rmSync(".dev.vars", { force: true });
  if (existsSync(RESULTS)) {
    /** @type {ReliabilityResults} */
    const results = JSON.parse(readFileSync(RESULTS, "utf8"));
    results.counts.faults ??= {};
    const faults = results.counts.faults;
    faults.injected_sigkill_runtime = survived + (survived < CRASHES ? 1 : 0);
    faults.survived_sigkill_runtime = survived;
    results.counts.secrets ??= {};
    const secrets = results.counts.secrets;
    secrets.runtime_log_lines_scanned = runtimeLog.lines;
    secrets.found = (secrets.found ?? 0) + runtimeLog.found.length;
    results.seconds += Math.round((Date.now() - started) / 1000);
    results.tests[failure ? "failed" : "passed"] += 1;
    if (failure) results.failures.push(`scripts/reliability-crash.mjs: ${failure}`);
    writeFileSync(RESULTS, `${JSON.stringify(results, null, 2)}\n`);
  }
}
