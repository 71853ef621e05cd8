// scratch
import "./ts-hooks.mjs";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execSync } from "node:child_process";
import { startStack } from "./stack.mjs";
const dir = mkdtempSync(join(tmpdir(), "agentry-lat-"));
const stack = await startStack(dir, { onStep: () => {} });
const med = (a) => a.sort((x, y) => x - y)[a.length >> 1].toFixed(2);
async function time(label, fn, n = 40) { for (let i = 0; i < 5; i++) await fn(); const t = []; for (let i = 0; i < n; i++) { const s = performance.now(); await fn(); t.push(performance.now() - s); } console.log(label, med(t)); }
const pids = execSync(`pgrep -g ${stack.agentry.group}`).toString().trim().split("\n").filter((p) => readFileSync(`/proc/${p}/comm`, "utf8").includes("workerd"));
console.log(execSync(`ss -ltnp | grep workerd`).toString());
for (const port of execSync(`ss -ltnp | grep workerd | awk '{print $4}' | sed 's/.*://'`).toString().trim().split("\n")) {
  try { await time(`GET /health :${port}`, async () => { const r = await fetch(`http://127.0.0.1:${port}/health`); await r.text(); }, 20); } catch (e) { console.log(port, e.message); }
}
await stack.stop();
process.exit(0);
