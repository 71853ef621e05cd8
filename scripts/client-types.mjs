// Writes client/openapi.d.ts, the types of the typed client (client/index.ts), from the Worker's OpenAPI document.
// `--default-non-nullable false`: a field with a default (stream, background, metadata, …) stays optional in a
// request body. `--check` writes nothing and exits 1 when the committed file is out of date (test/scripts/).
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const target = join(root, "client", "openapi.d.ts");

/** The generated text for the current source tree. */
export function clientTypes() {
  execFileSync(process.execPath, [join(root, "scripts", "openapi-document.mjs")], { cwd: root, stdio: "ignore" });
  const bin = join(root, "node_modules", "openapi-typescript", "bin", "cli.js");
  return execFileSync(process.execPath, [bin, join(root, "dist", "openapi.json"), "--default-non-nullable", "false"], {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const text = clientTypes();
  if (process.argv.includes("--check")) {
    const current = readFileSync(target, "utf8");
    if (current !== text) {
      console.error("client/openapi.d.ts is out of date: run `npm run client:types`");
      process.exit(1);
    }
    console.log("client/openapi.d.ts is up to date");
  } else {
    writeFileSync(target, text);
    console.log("wrote client/openapi.d.ts");
  }
}
