// A stand-in for `wrangler` on PATH (test/scripts/deploy.node.mjs): it records each call in the JSON state
// file named by FAKE_WRANGLER_STATE and answers from the resources that state holds, as Cloudflare would.
import { readFileSync, writeFileSync } from "node:fs";

const file = process.env.FAKE_WRANGLER_STATE;
const state = JSON.parse(readFileSync(file, "utf8"));
const args = process.argv.slice(2);
state.calls.push(args);
const save = () => writeFileSync(file, JSON.stringify(state, null, 2));
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
  state.databases.push({ uuid: `db-${state.databases.length + 1}-uuid`, name: c, created_at: "now" });
  console.log(`Created ${c}`);
} else if (a === "queues" && b === "info") {
  if (!state.queues.includes(c)) fail(`Queue ${c} does not exist [code: 11000]`);
  console.log(`Queue Name: ${c}`);
} else if (a === "queues" && b === "create") {
  state.queues.push(c);
} else if (a === "r2" && b === "bucket" && c === "info") {
  if (!state.buckets.includes(d)) fail(`The specified bucket does not exist. [code: 10006]`);
} else if (a === "r2" && b === "bucket" && c === "create") {
  state.buckets.push(d);
} else if (a === "d1" && b === "migrations" && c === "apply") {
  // --config names the file whose database id wrangler uses.
  const config = readFileSync(args[args.indexOf("--config") + 1], "utf8");
  state.migratedIds.push(/database_id = "([^"]+)"/.exec(config)[1]);
} else if (a === "deploy") {
  state.deployed += 1;
} else {
  fail(`fake wrangler: unexpected call ${args.join(" ")}`);
}
save();
