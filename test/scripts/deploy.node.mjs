// `npm run deploy` (scripts/deploy.mjs) against a fake `wrangler` on PATH, in a copy of the project's config:
// run with `npm run test:scripts` (node:test; no workerd, no Cloudflare account).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

/** @import { FakeWranglerState } from "./fake-wrangler.mjs" */

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/**
 * A project folder (wrangler.toml copied) and a bin folder whose `wrangler` is the fake, with `state` as the account.
 * @param {Partial<FakeWranglerState>} [account]
 */
function setUp(account) {
  const dir = mkdtempSync(join(tmpdir(), "agentry-deploy-"));
  copyFileSync(join(root, "wrangler.toml"), join(dir, "wrangler.toml"));
  const bin = join(dir, "bin");
  spawnSync("mkdir", [bin]);
  writeFileSync(
    join(bin, "wrangler"),
    `#!/bin/sh\nexec "${process.execPath}" "${join(root, "test", "scripts", "fake-wrangler.mjs")}" "$@"\n`,
  );
  chmodSync(join(bin, "wrangler"), 0o755);
  const stateFile = join(dir, "state.json");
  writeFileSync(
    stateFile,
    JSON.stringify({ loggedIn: true, databases: [], queues: [], buckets: [], migratedIds: [], deployed: 0, calls: [], ...account }),
  );
  /** @param {string[]} args */
  const deploy = (...args) => {
    const result = spawnSync(process.execPath, [join(root, "scripts", "deploy.mjs"), ...args], {
      cwd: dir,
      encoding: "utf8",
      env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, FAKE_WRANGLER_STATE: stateFile },
    });
    /** @type {FakeWranglerState} */
    const state = JSON.parse(readFileSync(stateFile, "utf8"));
    return { ...result, state };
  };
  return { dir, deploy };
}

/** @param {string[][]} calls */
const creates = (calls) => calls.filter((call) => call.includes("create")).map((call) => call.join(" "));

test("a first deploy creates the database, the queues (dead-letter first) and the bucket, migrates and deploys", () => {
  const { dir, deploy } = setUp();
  const run = deploy();
  assert.equal(run.status, 0, run.stderr);
  assert.deepEqual(creates(run.state.calls), [
    "d1 create agentry",
    "queues create agentry-runs-dlq",
    "queues create agentry-runs",
    "queues create agentry-webhooks",
    "r2 bucket create agentry-media",
  ]);
  const written = readFileSync(join(dir, "wrangler.deploy.toml"), "utf8");
  assert.match(written, /database_id = "db-1-uuid"/);
  assert.doesNotMatch(readFileSync(join(dir, "wrangler.toml"), "utf8"), /^database_id\s*=/m, "wrangler.toml keeps no database id");
  assert.deepEqual(run.state.migratedIds, ["db-1-uuid"]);
  assert.equal(run.state.deployed, 1);
  const last = run.state.calls.slice(-2).map((call) => call.join(" "));
  assert.deepEqual(last, ["d1 migrations apply DB --remote --config wrangler.deploy.toml", "deploy --config wrangler.deploy.toml"]);
});

test("a second deploy reuses everything: no create, the same database id", () => {
  const { deploy } = setUp();
  assert.equal(deploy().status, 0);
  const again = deploy();
  assert.equal(again.status, 0, again.stderr);
  assert.equal(creates(again.state.calls).length, 5, "only the first run's creates");
  assert.deepEqual(again.state.migratedIds, ["db-1-uuid", "db-1-uuid"]);
  assert.equal(again.state.deployed, 2);
});

test("an account that already has the database uses its id", () => {
  const { deploy } = setUp({ databases: [{ uuid: "existing-uuid", name: "agentry" }], queues: ["agentry-runs"] });
  const run = deploy();
  assert.equal(run.status, 0, run.stderr);
  assert.deepEqual(creates(run.state.calls), [
    "queues create agentry-runs-dlq",
    "queues create agentry-webhooks",
    "r2 bucket create agentry-media",
  ]);
  assert.deepEqual(run.state.migratedIds, ["existing-uuid"]);
});

test("--jurisdiction eu creates D1 and R2 in it and writes the bucket's jurisdiction", () => {
  const { dir, deploy } = setUp();
  const run = deploy("--jurisdiction", "eu", "--location", "weur");
  assert.equal(run.status, 0, run.stderr);
  assert.deepEqual(creates(run.state.calls), [
    "d1 create agentry --jurisdiction eu",
    "queues create agentry-runs-dlq",
    "queues create agentry-runs",
    "queues create agentry-webhooks",
    "r2 bucket create agentry-media --jurisdiction eu",
  ]);
  assert.match(readFileSync(join(dir, "wrangler.deploy.toml"), "utf8"), /bucket_name = "agentry-media"\njurisdiction = "eu"/);
});

test("--dry-run prints the plan and calls nothing", () => {
  const { dir, deploy } = setUp();
  const run = deploy("--dry-run", "--location", "weur");
  assert.equal(run.status, 0, run.stderr);
  assert.deepEqual(run.state.calls, []);
  assert.equal(existsSync(join(dir, "wrangler.deploy.toml")), false);
  assert.match(run.stdout, /wrangler d1 create agentry --location weur/);
  assert.match(run.stdout, /wrangler queues create agentry-runs-dlq/);
  assert.match(run.stdout, /wrangler r2 bucket create agentry-media --location weur/);
  assert.match(run.stdout, /wrangler deploy --config wrangler.deploy.toml/);
});

test("without a login it stops before creating anything, and says why", () => {
  const { deploy } = setUp({ loggedIn: false });
  const run = deploy();
  assert.equal(run.status, 1);
  assert.deepEqual(run.state.calls, [["whoami"]]);
  assert.match(run.stderr, /wrangler whoami failed.*not authenticated/s);
});
