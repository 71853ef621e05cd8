// Agentry as `npm start` runs it (wrangler dev, local D1 with its migrations, ENVIRONMENT=development),
// but on a free port, with its own temporary state and secrets: the developer's .dev.vars and
// .wrangler/state are never read or written.
import { spawn, spawnSync } from "node:child_process";
import { createWriteStream, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { median, now, sleep } from "./stats.mjs";

/** Environment of every wrangler command the bench runs: nothing tries to leave the machine. */
export const wranglerEnv = {
  ...process.env,
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  WRANGLER_SEND_METRICS: "false",
  CLOUDFLARE_LOAD_DEV_VARS_FROM_DOT_ENV: "true",
  CI: "true",
  // As `npm start` runs it (scripts/start.mjs): without wrangler's local trace collector.
  X_LOCAL_OBSERVABILITY: process.env.X_LOCAL_OBSERVABILITY ?? "false",
};

/**
 * A TCP port that was free a moment ago on 127.0.0.1.
 * @returns {Promise<number>}
 */
export async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(undefined)));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("a listening TCP server has no port");
  await new Promise((resolve) => server.close(resolve));
  return address.port;
}

/**
 * Applies the migrations to a local D1 under `dir`, then starts `wrangler dev` in its own process
 * group (so its CPU can be summed and it can be stopped as a whole) and waits for /v1/health.
 * With `inspectorPort`, workerd's V8 inspector listens there (profile.mjs takes CPU profiles through it).
 * `vars` are more `--var`s (the cost measurement's `STORAGE_METER`).
 * @param {{ dir: string, secrets: Record<string, string>, inspectorPort?: number | null, vars?: Record<string, string> }} options
 */
export async function startAgentry({ dir, secrets, inspectorPort = null, vars = {} }) {
  const persist = join(dir, "state");
  const envFile = join(dir, "bench.env");
  writeFileSync(
    envFile,
    Object.entries(secrets)
      .map(([k, v]) => `${k}=${v}\n`)
      .join(""),
  );
  const migrate = spawnSync("wrangler", ["d1", "migrations", "apply", "DB", "--local", "--persist-to", persist], {
    env: wranglerEnv,
    encoding: "utf8",
  });
  if (migrate.status !== 0) throw new Error(`wrangler d1 migrations apply failed:\n${migrate.stdout}\n${migrate.stderr}`);

  const port = await freePort();
  const logPath = join(dir, "wrangler.log");
  const logFile = createWriteStream(logPath);
  const args = [
    "dev",
    "--ip",
    "127.0.0.1",
    "--port",
    String(port),
    "--persist-to",
    persist,
    "--env-file",
    envFile,
    "--var",
    "ENVIRONMENT:development",
    ...Object.entries(vars).flatMap(([name, value]) => ["--var", `${name}:${value}`]),
    "--show-interactive-dev-session=false",
    // Profiled code is left unminified, so that the profile names functions and esbuild's `// path` comments place them.
    ...(inspectorPort ? ["--inspector-port", String(inspectorPort), "--minify", "false"] : []),
  ];
  const child = spawn("wrangler", args, { env: wranglerEnv, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout.pipe(logFile);
  child.stderr.pipe(logFile);
  /** @type {number | null} */
  let exited = null;
  child.on("exit", (code) => {
    exited = code ?? -1;
  });
  const origin = `http://127.0.0.1:${port}`;
  const group = child.pid;
  if (group === undefined) throw new Error(`wrangler dev did not start; see ${logPath}`);
  const deadline = now() + 120_000;
  for (;;) {
    if (exited !== null) throw new Error(`wrangler dev exited with ${exited}; see ${logPath}`);
    if (now() > deadline) throw new Error(`wrangler dev did not answer within 120 s; see ${logPath}`);
    const ok = await fetch(`${origin}/v1/health`, { headers: { authorization: `Bearer ${secrets.ADMIN_TOKEN}` } })
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) break;
    await sleep(250);
  }
  return {
    origin,
    group,
    logPath,
    stop: async () => {
      if (exited !== null) return;
      const gone = new Promise((resolve) => child.once("exit", resolve));
      process.kill(-group, "SIGTERM");
      await Promise.race([gone, sleep(5_000)]);
      if (exited === null) process.kill(-group, "SIGKILL");
    },
  };
}

const TICKS_PER_SECOND = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim()) || 100;

/**
 * The live processes of a process group, from /proc: pid, command name and the fields of
 * `/proc/<pid>/stat` after "pid (comm) " (state ppid pgrp … utime stime …). Throws off Linux.
 * @param {number} group
 */
function groupProcesses(group) {
  /** @type {{ pid: string, name: string, fields: string[] }[]} */
  const found = [];
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    let stat;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      continue; // gone since the listing
    }
    const close = stat.lastIndexOf(")");
    const fields = stat.slice(close + 2).split(" ");
    if (Number(fields[2]) === group) found.push({ pid, name: stat.slice(stat.indexOf("(") + 1, close), fields });
  }
  return found;
}

/**
 * CPU milliseconds (user + system) used so far by every live process of a process group, by
 * command name (`workerd`, `node` …), from /proc. Linux only; null elsewhere.
 * @param {number} group
 * @returns {Record<string, number> | null}
 */
export function groupCpu(group) {
  let processes;
  try {
    processes = groupProcesses(group);
  } catch {
    return null;
  }
  /** @type {Record<string, number>} */
  const byName = {};
  for (const { name, fields } of processes) {
    // fields: state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime.
    const ms = ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
    byName[name] = (byName[name] ?? 0) + ms;
  }
  return byName;
}

/**
 * The difference of two `groupCpu` readings, by name and in total.
 * @param {Record<string, number> | null} before
 * @param {Record<string, number> | null} after
 */
export function cpuDelta(before, after) {
  if (!before || !after) return null;
  /** @type {Record<string, number>} */
  const byName = {};
  for (const name of new Set([...Object.keys(before), ...Object.keys(after)])) {
    byName[name] = (after[name] ?? 0) - (before[name] ?? 0);
  }
  return { total: Object.values(byName).reduce((a, b) => a + b, 0), byName };
}

/**
 * TCP ports listening on 127.0.0.1 owned by a process of the group whose command is `name`, from /proc.
 * @param {number} group
 * @param {string} name
 */
function listeningPorts(group, name) {
  /** @type {Set<string | undefined>} */
  const inodes = new Set();
  for (const { pid } of groupProcesses(group).filter((p) => p.name === name)) {
    try {
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        const link = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
        if (link) inodes.add(link);
      }
    } catch {
      // gone since the listing
    }
  }
  /** @type {number[]} */
  const ports = [];
  for (const line of readFileSync("/proc/net/tcp", "utf8").split("\n").slice(1)) {
    const f = line.trim().split(/\s+/);
    // local_address rem_address st … inode: 0100007F:PORT, state 0A = LISTEN.
    if (f[3] === "0A" && f[1]?.startsWith("0100007F:") && inodes.has(f[9])) ports.push(parseInt(String(f[1].split(":")[1]), 16));
  }
  return ports;
}

/**
 * The times (ms) of `count` `GET /health` one after another at `origin`; null as soon as one
 * does not answer 200 with `expected` (any 200 body when it is undefined).
 * @param {string} origin
 * @param {number} count
 * @param {string} [expected]
 */
export async function healthTimes(origin, count, expected) {
  /** @type {number[]} */
  const times = [];
  for (let i = 0; i < count; i += 1) {
    const startedAt = now();
    const answer = await fetch(`${origin}/health`, { signal: AbortSignal.timeout(2_000) })
      .then(async (r) => (r.status === 200 ? r.text() : null))
      .catch(() => null);
    if (answer === null || (expected !== undefined && answer !== expected)) return null;
    times.push(now() - startedAt);
  }
  return times;
}

/**
 * The Worker's own socket in workerd, behind wrangler dev's proxy (which serves `origin` and
 * hands each request to it through a Durable Object of its own): what a request costs without
 * the dev-only hop. Null when none answers /health like Agentry (not Linux, another wrangler).
 * @param {{ origin: string, group: number }} agentry
 */
export async function directOrigin(agentry) {
  const publicPort = Number(new URL(agentry.origin).port);
  /** @type {number[]} */
  let ports = [];
  try {
    ports = listeningPorts(agentry.group, "workerd").filter((port) => port !== publicPort);
  } catch {
    return null;
  }
  const expected = await (await fetch(`${agentry.origin}/health`)).text();
  // workerd listens on several sockets (miniflare's entry, the Worker's own): the quickest that answers like Agentry.
  /** @type {{ origin: string, time: number } | null} */
  let best = null;
  for (const port of ports) {
    const origin = `http://127.0.0.1:${port}`;
    const times = await healthTimes(origin, 7, expected);
    const time = times === null ? null : median(times);
    if (time !== null && (best === null || time < best.time)) best = { origin, time };
  }
  return best?.origin ?? null;
}
