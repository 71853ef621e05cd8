// Writes the Worker's OpenAPI document to dist/openapi.json, without starting the Worker: bundles src/api/app.ts
// for Node (the Durable Object base class stubbed) and asks the app for /openapi.json. `npm run openapi:lint` lints it.
import { build } from "esbuild";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "dist", "openapi");
mkdirSync(out, { recursive: true });
writeFileSync(join(out, "workers-stub.mjs"), "export class DurableObject { constructor(ctx, env) { this.ctx = ctx; this.env = env; } }\n");
writeFileSync(
  join(out, "entry.ts"),
  `import { createApp } from ${JSON.stringify(join(root, "src", "api", "app"))};\nexport const documentText = async () => (await createApp().request("/openapi.json")).text();\n`,
);
await build({
  entryPoints: [join(out, "entry.ts")],
  bundle: true,
  platform: "node",
  format: "esm",
  alias: { "cloudflare:workers": join(out, "workers-stub.mjs") },
  outfile: join(out, "entry.mjs"),
  logLevel: "warning",
});
const { documentText } = await import(pathToFileURL(join(out, "entry.mjs")).href);
const text = await documentText();
JSON.parse(text);
writeFileSync(join(root, "dist", "openapi.json"), `${JSON.stringify(JSON.parse(text), null, 2)}\n`);
console.log("wrote dist/openapi.json");

if (process.argv.includes("--write-docs")) {
  const { renderApiReference } = await import("./api-reference.mjs");
  writeFileSync(join(root, "docs", "api.md"), renderApiReference(JSON.parse(text)));
  console.log("wrote docs/api.md");
}
