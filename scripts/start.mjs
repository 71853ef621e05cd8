// `npm start`: Agentry locally on its embedded defaults (the offline model, local D1/DO).
import { spawnSync, spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";

const env = {
  ...process.env,
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  WRANGLER_SEND_METRICS: "false",
  CI: process.env.CI ?? "true", // wrangler then never waits for a confirmation prompt
};

if (!existsSync(".dev.vars")) {
  writeFileSync(".dev.vars", "ADMIN_TOKEN=dev-admin-token\nWEBHOOK_SECRET=dev-webhook-secret\n");
  console.log("Created .dev.vars with ADMIN_TOKEN=dev-admin-token (edit it to change the local secrets).");
}

const migrate = spawnSync("wrangler", ["d1", "migrations", "apply", "DB", "--local"], { stdio: "inherit", env });
if (migrate.status !== 0) process.exit(migrate.status ?? 1);

const port = process.env.PORT ?? "8787";
const dev = spawn(
  "wrangler",
  ["dev", "--ip", "127.0.0.1", "--port", port, "--var", "ENVIRONMENT:development", "--show-interactive-dev-session=false"],
  { stdio: "inherit", env },
);
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => dev.kill(signal));
dev.on("exit", (code) => process.exit(code ?? 0));
