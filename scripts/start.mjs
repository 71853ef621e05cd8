// `npm start`: Agentry locally on its embedded defaults (the offline model, local D1/DO).
import { spawnSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";

const env = {
  ...process.env,
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  WRANGLER_SEND_METRICS: "false",
  CI: process.env.CI ?? "true", // wrangler then never waits for a confirmation prompt
  // wrangler's local trace collector (the local explorer's traces) streams every invocation's spans
  // and log lines to another worker in workerd: ≈ 40 % of workerd's CPU in a tool run
  // (docs/performance.md). Off unless asked for; Workers Logs and traces on Cloudflare are untouched.
  X_LOCAL_OBSERVABILITY: process.env.X_LOCAL_OBSERVABILITY ?? "false",
};

// Encrypts tenants' provider credentials (src/credentials): 32 random bytes in base64, kept in .dev.vars.
const credentialsKeyLine = () => `CREDENTIALS_KEY=${randomBytes(32).toString("base64")}\n`;

if (!existsSync(".dev.vars")) {
  writeFileSync(".dev.vars", `ADMIN_TOKEN=dev-admin-token\nWEBHOOK_SECRET=dev-webhook-secret\n${credentialsKeyLine()}`);
  // The values stay out of the output: a secret is never printed, even the documented local default.
  console.log(
    "Created .dev.vars with the local ADMIN_TOKEN (README, Run it locally) and a random CREDENTIALS_KEY (edit it to change the local secrets).",
  );
} else {
  const vars = readFileSync(".dev.vars", "utf8");
  if (!/^\s*CREDENTIALS_KEY\s*=/m.test(vars)) {
    appendFileSync(".dev.vars", `${vars === "" || vars.endsWith("\n") ? "" : "\n"}${credentialsKeyLine()}`);
    console.log(
      "Added a random CREDENTIALS_KEY to .dev.vars (it encrypts tenants' provider credentials; keep it, or stored credentials stop decrypting).",
    );
  }
}

const migrate = spawnSync("wrangler", ["d1", "migrations", "apply", "DB", "--local"], { stdio: "inherit", env });
if (migrate.status !== 0) process.exit(migrate.status ?? 1);

const port = process.env.PORT ?? "8787";
const dev = spawn(
  "wrangler",
  ["dev", "--ip", "127.0.0.1", "--port", port, "--var", "ENVIRONMENT:development", "--show-interactive-dev-session=false"],
  { stdio: "inherit", env },
);
for (const signal of /** @type {const} */ (["SIGINT", "SIGTERM"])) process.on(signal, () => dev.kill(signal));
dev.on("exit", (code) => process.exit(code ?? 0));
