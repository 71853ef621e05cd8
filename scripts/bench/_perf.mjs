// scratch: not committed
import "./ts-hooks.mjs";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawn, execSync } from "node:child_process";
import { runTurn } from "./agentry-client.mjs";
import { TOOL_INPUT } from "./measures.mjs";
import { startStack } from "./stack.mjs";
const runs = Number(process.env.RUNS ?? 30);
const dir = mkdtempSync(join(tmpdir(), "agentry-perf-"));
const stack = await startStack(dir, { onStep: (s) => console.log(s) });
stack.provider.setLatency(Number(process.env.L ?? 20));
const check = async () => { const t = await runTurn(stack.tenant, stack.agentId, TOOL_INPUT); if (t.run?.status !== "completed") throw new Error("bad"); return t.endedAt - t.startedAt; };
for (let i = 0; i < 5; i++) await check();
const pids = execSync(`pgrep -g ${stack.agentry.group}`).toString().trim().split("\n");
for (const p of pids) console.log(p, readFileSync(`/proc/${p}/comm`, "utf8").trim(), readFileSync(`/proc/${p}/cmdline`, "utf8").slice(0,150).replace(/\0/g," "));
const wds = pids.filter((p) => readFileSync(`/proc/${p}/comm`, "utf8").includes("workerd"));
const wd = wds[wds.length-1];
console.log("workerd pid", wd);
const threads = () => Object.fromEntries(readdirSync(`/proc/${wd}/task`).map((t) => { const s = readFileSync(`/proc/${wd}/task/${t}/stat`, "utf8"); const f = s.slice(s.lastIndexOf(")") + 2).split(" "); const comm = s.slice(s.indexOf("(") + 1, s.lastIndexOf(")")); return [`${t} ${comm}`, (Number(f[11]) + Number(f[12])) * 10]; }));
let perf = null;
if (process.env.STRACE) perf = spawn("strace", ["-f", "-y", "-e", "trace=fsync,write,writev,sendto,sendmsg,connect,recvfrom,read,readv,pwrite64,getrandom", "-tt", "-o", "/tmp/perfx/strace.txt", "-p", wd], { stdio: "inherit" });
if (process.env.PERF) perf = spawn("perf", ["record", "-F", "2000", "-g", "-p", wd, "-o", "/tmp/perfx/perf.data"], { stdio: "inherit" });
await new Promise((r) => setTimeout(r, 500));
const a = threads();
const times = [];
for (let i = 0; i < runs; i++) times.push(await check());
const b = threads();
if (perf) { perf.kill("SIGINT"); await new Promise((r) => perf.once("exit", r)); }
times.sort((x, y) => x - y);
console.log("median", times[runs >> 1].toFixed(1));
for (const k of Object.keys(b)) { const d = (b[k] - (a[k] ?? 0)) / runs; if (d > 0) console.log(k, d.toFixed(2), "ms/run"); }
await stack.stop();
process.exit(0);
