// The deployed bundle's size: what `wrangler deploy --dry-run --outdir` writes, raw and gzipped.
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { wranglerEnv } from "./agentry-server.mjs";

/**
 * Builds the Worker into `outdir` and sums its uploaded files (source maps excluded), in bytes.
 * @param {string} outdir
 */
export function bundleSize(outdir) {
  const build = spawnSync("wrangler", ["deploy", "--dry-run", "--outdir", outdir], { env: wranglerEnv, encoding: "utf8" });
  if (build.status !== 0) throw new Error(`wrangler deploy --dry-run failed:\n${build.stdout}\n${build.stderr}`);
  let raw = 0;
  let gzip = 0;
  for (const name of readdirSync(outdir, { recursive: true, encoding: "utf8" })) {
    if (name.endsWith(".map") || !/\.(m?js|wasm|bin|txt|html)$/.test(name)) continue;
    const bytes = readFileSync(join(outdir, name));
    raw += bytes.length;
    gzip += gzipSync(bytes).length;
  }
  return { raw, gzip };
}
