// `npm run deploy`: one command from a Cloudflare login to a running Agentry (docs/deploy.md).
// Creates what the Worker's bindings need when it does not exist yet (the D1 database, the runs
// queue and its dead-letter queue, the R2 bucket; names from wrangler.toml), writes
// wrangler.deploy.toml (wrangler.toml with the database's real id; gitignored), applies the D1
// migrations remotely and deploys. Idempotent: a second run finds everything and only migrates
// (nothing when up to date) and deploys. wrangler.toml has no database id, so
// `wrangler deploy --dry-run` (`npm run build`, CI) needs no account.
//
//   node scripts/deploy.mjs [--dry-run] [--location weur|eeur|apac|oc|wnam|enam] [--jurisdiction eu|fedramp]
//
// --dry-run prints the plan and calls nothing. --location / --jurisdiction apply to what this run
// creates (D1 and R2; a jurisdiction wins over a location hint), never to what exists.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

// The project (npm runs scripts there); a test runs it in a copy with a fake wrangler.
const root = process.cwd();
const DEPLOY_CONFIG = "wrangler.deploy.toml";

/**
 * wrangler.toml with the database's id in its `[[d1_databases]]` entry: after its
 * `database_name`, or in place of an id it already has.
 * @param {string} toml
 * @param {string} name
 * @param {string} id
 * @returns {string}
 */
export function withDatabaseId(toml, name, id) {
  const existing = /^database_id\s*=\s*"[^"]*"\s*$/m;
  if (existing.test(toml)) return toml.replace(existing, `database_id = "${id}"`);
  const named = new RegExp(`^database_name\\s*=\\s*"${name}"\\s*$`, "m");
  if (!named.test(toml)) throw new Error(`wrangler.toml has no [[d1_databases]] entry named "${name}"`);
  return toml.replace(named, (line) => `${line}\ndatabase_id = "${id}"`);
}

/**
 * The resource names of wrangler.toml: only the few keys this script needs, read line by line.
 * @param {string} toml
 * @returns {{ database: string, queues: string[], bucket: string }}
 */
export function resourcesOf(toml) {
  /** @type {{ name: string, values: Record<string, string | undefined> }[]} */
  const sections = [];
  /** @type {{ name: string, values: Record<string, string | undefined> } | null} */
  let current = null;
  for (const line of toml.split("\n")) {
    const header = /^\s*\[\[?([^\]]+)\]\]?\s*$/.exec(line);
    if (header?.[1] !== undefined) {
      current = { name: header[1].trim(), values: {} };
      sections.push(current);
      continue;
    }
    const pair = /^\s*([A-Za-z_]+)\s*=\s*"([^"]*)"/.exec(line);
    if (pair?.[1] !== undefined && current) current.values[pair[1]] = pair[2];
  }
  /** @param {string} name */
  const all = (name) => sections.filter((section) => section.name === name).map((section) => section.values);
  const database = all("d1_databases").find((values) => values.binding === "DB");
  /** @type {Set<string>} */
  const queues = new Set();
  for (const values of all("queues.producers")) if (values.queue !== undefined) queues.add(values.queue);
  for (const values of all("queues.consumers")) {
    if (values.queue !== undefined) queues.add(values.queue);
    if (values.dead_letter_queue) queues.add(values.dead_letter_queue);
  }
  const bucket = all("r2_buckets").find((values) => values.binding === "MEDIA");
  if (!database?.database_name || !bucket?.bucket_name || queues.size === 0)
    throw new Error("wrangler.toml lacks the DB database, the MEDIA bucket or the queues");
  // A dead-letter queue first: a consumer naming it needs it to exist.
  const dlqs = all("queues.consumers").flatMap((values) => (values.dead_letter_queue ? [values.dead_letter_queue] : []));
  return {
    database: database.database_name,
    queues: [...dlqs, ...[...queues].filter((name) => !dlqs.includes(name))],
    bucket: bucket.bucket_name,
  };
}

/** @param {string[]} argv */
function parseArgs(argv) {
  /** @type {{ dryRun: boolean, location: string | undefined, jurisdiction: string | undefined }} */
  const options = { dryRun: false, location: undefined, jurisdiction: undefined };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = (argv[i] ?? "").split("=", 2);
    const value = () => inline ?? argv[++i];
    if (flag === "--dry-run") options.dryRun = true;
    else if (flag === "--location") options.location = value();
    else if (flag === "--jurisdiction") options.jurisdiction = value();
    else throw new Error(`unknown option ${argv[i]} (known: --dry-run, --location, --jurisdiction)`);
  }
  return options;
}

/**
 * Runs wrangler (the one on PATH: npm puts node_modules/.bin there); `inherit` shows its output and prompts.
 * @param {string[]} args
 * @param {{ inherit?: boolean, allowFailure?: boolean }} [options]
 */
function wrangler(args, { inherit = false, allowFailure = false } = {}) {
  const result = spawnSync("wrangler", args, {
    cwd: root,
    encoding: "utf8",
    stdio: inherit ? "inherit" : ["ignore", "pipe", "pipe"],
    env: { ...process.env, WRANGLER_SEND_METRICS: process.env.WRANGLER_SEND_METRICS ?? "false" },
  });
  if (result.error) throw new Error(`could not run wrangler: ${result.error.message}`);
  if (result.status !== 0 && !allowFailure) {
    throw new Error(`wrangler ${args.join(" ")} failed (exit ${result.status})${inherit ? "" : `:\n${result.stderr || result.stdout}`}`);
  }
  return result;
}

/** @param {string} line */
const say = (line) => console.log(line);

function main() {
  const options = parseArgs(process.argv.slice(2));
  const toml = readFileSync(join(root, "wrangler.toml"), "utf8");
  const names = resourcesOf(toml);
  const placement = [
    ...(options.jurisdiction ? ["--jurisdiction", options.jurisdiction] : []),
    ...(options.location && !options.jurisdiction ? ["--location", options.location] : []),
  ];
  const r2Scope = options.jurisdiction ? ["--jurisdiction", options.jurisdiction] : [];
  const r2Create = [...r2Scope, ...(options.location && !options.jurisdiction ? ["--location", options.location] : [])];
  const config = ["--config", DEPLOY_CONFIG];

  if (options.dryRun) {
    say("Plan (--dry-run: nothing is called):");
    say(
      `1. D1 database "${names.database}": reuse it if \`wrangler d1 list --json\` has it, else \`wrangler d1 create ${[names.database, ...placement].join(" ")}\``,
    );
    for (const [i, queue] of names.queues.entries()) {
      say(`${2 + i}. queue "${queue}": reuse it if \`wrangler queues info ${queue}\` finds it, else \`wrangler queues create ${queue}\``);
    }
    let step = 2 + names.queues.length;
    say(
      `${step++}. R2 bucket "${names.bucket}": reuse it if \`wrangler r2 bucket info ${[names.bucket, ...r2Scope].join(" ")}\` finds it, else \`wrangler r2 bucket create ${[names.bucket, ...r2Create].join(" ")}\``,
    );
    say(`${step++}. write ${DEPLOY_CONFIG}: wrangler.toml with the database's id`);
    say(`${step++}. wrangler d1 migrations apply DB --remote ${config.join(" ")}`);
    say(`${step++}. wrangler deploy ${config.join(" ")}`);
    return;
  }

  wrangler(["whoami"], { inherit: false });

  // D1
  /** @typedef {{ name: string, uuid: string }} D1Database What this script reads of `wrangler d1 list --json`. */
  /** @returns {D1Database[]} */
  const listDatabases = () => JSON.parse(wrangler(["d1", "list", "--json"]).stdout);
  let database = listDatabases().find((db) => db.name === names.database);
  if (database) say(`D1 database "${names.database}": exists (${database.uuid})`);
  else {
    say(`D1 database "${names.database}": creating`);
    wrangler(["d1", "create", names.database, ...placement]);
    database = listDatabases().find((db) => db.name === names.database);
    if (!database) throw new Error(`wrangler d1 create ${names.database} succeeded but d1 list does not show it`);
  }

  // Queues (the dead-letter queue first)
  for (const queue of names.queues) {
    if (wrangler(["queues", "info", queue], { allowFailure: true }).status === 0) say(`queue "${queue}": exists`);
    else {
      say(`queue "${queue}": creating`);
      wrangler(["queues", "create", queue]);
    }
  }

  // R2
  if (wrangler(["r2", "bucket", "info", names.bucket, ...r2Scope], { allowFailure: true }).status === 0)
    say(`R2 bucket "${names.bucket}": exists`);
  else {
    say(`R2 bucket "${names.bucket}": creating`);
    wrangler(["r2", "bucket", "create", names.bucket, ...r2Create]);
  }

  // The config with the real id (and the bucket's jurisdiction); wrangler.toml stays as it is.
  let deployToml = `# Written by scripts/deploy.mjs from wrangler.toml: do not edit (it is rewritten on each deploy).\n${withDatabaseId(toml, names.database, database.uuid)}`;
  if (options.jurisdiction)
    deployToml = deployToml.replace(
      `bucket_name = "${names.bucket}"`,
      `bucket_name = "${names.bucket}"\njurisdiction = "${options.jurisdiction}"`,
    );
  writeFileSync(join(root, DEPLOY_CONFIG), deployToml);
  say(`wrote ${DEPLOY_CONFIG}`);

  say("applying D1 migrations (remote)");
  wrangler(["d1", "migrations", "apply", "DB", "--remote", ...config], { inherit: true });
  say("deploying");
  wrangler(["deploy", ...config], { inherit: true });
  say("deployed. Secrets are not set by this script: see docs/deploy.md (ADMIN_TOKEN, WEBHOOK_SECRET, CREDENTIALS_KEY, provider keys).");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    main();
  } catch (error) {
    console.error(`deploy: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
