// A stand-in for `wrangler` on PATH (test/scripts/deploy.node.mjs): it records each call in the JSON state
// file named by FAKE_WRANGLER_STATE and answers from the resources that state holds, as Cloudflare would.
import { readFileSync, writeFileSync } from "node:fs";

/**
 * @typedef {object} FakeWranglerState The fake account, kept in the FAKE_WRANGLER_STATE file.
 * @property {boolean} loggedIn
 * @property {{ uuid: string, name: string, created_at?: string }[]} databases
 * @property {string[]} queues
 * @property {string[]} buckets
 * @property {string[]} migratedIds the database ids of the configs `d1 migrations apply` was given
 * @property {number} deployed
 * @property {string[][]} calls each call's arguments
 */

const file = process.env.FAKE_WRANGLER_STATE;
if (file === undefined) throw new Error("fake wrangler: FAKE_WRANGLER_STATE is not set");
/** @type {FakeWranglerState} */
const state = JSON.parse(readFileSync(file, "utf8"));
const args = process.argv.slice(2);
state.calls.push(args);
const save = () => writeFileSync(file, JSON.stringify(state, null, 2));
/** @param {string} message */
const fail = (message) => {
  save();
  console.error(message);
  process.exit(1);
};
const [a, b, c, d] = args;

if (a === "whoami") {
  if (!state.loggedIn) fail("You are not authenticated. Please run `wrangler login`.");
  console.log("You are logged in");
} else if (a === "d1" && b === "list") {
  console.log(JSON.stringify(state.databases));
} else if (a === "d1" && b === "create") {
  state.databases.push({ uuid: `db-${state.databases.length + 1}-uuid`, name: String(c), created_at: "now" });
  console.log(`Created ${c}`);
} else if (a === "queues" && b === "info") {
  if (c === undefined || !state.queues.includes(c)) fail(`Queue ${c} does not exist [code: 11000]`);
  console.log(`Queue Name: ${c}`);
} else if (a === "queues" && b === "create") {
  if (c !== undefined) state.queues.push(c);
} else if (a === "r2" && b === "bucket" && c === "info") {
  if (d === undefined || !state.buckets.includes(d)) fail(`The specified bucket does not exist. [code: 10006]`);
} else if (a === "r2" && b === "bucket" && c === "create") {
  if (d !== undefined) state.buckets.push(d);
} else if (a === "d1" && b === "migrations" && c === "apply") {
  // --config names the file whose database id wrangler uses.
  const config = readFileSync(String(args[args.indexOf("--config") + 1]), "utf8");
  const id = /database_id = "([^"]+)"/.exec(config)?.[1];
  if (id === undefined) fail(`fake wrangler: no database_id in ${config}`);
  else state.migratedIds.push(id);
} else if (a === "deploy") {
  state.deployed += 1;
} else {
  fail(`fake wrangler: unexpected call ${args.join(" ")}`);
}
save();
