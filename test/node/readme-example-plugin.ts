import { readFileSync } from "node:fs";
import { join } from "node:path";
import { transformSync } from "esbuild";
import type { Plugin } from "vite";

const ID = "virtual:readme-client-example";
const START = "<!-- client-example:start -->";
const END = "<!-- client-example:end -->";

/** The README's TypeScript client example: the ```ts block between the client-example markers. */
export function readmeClientExample(root: string): string {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf(START), readme.indexOf(END));
  const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  if (!section || !block) throw new Error(`README.md has no \`\`\`ts block between ${START} and ${END}`);
  return block;
}

/**
 * `import("virtual:readme-client-example")` runs the README's client example, exactly as written,
 * in the test's workerd (test/client-readme.test.ts): only its `./client/` import is pointed at the
 * repository's folder, because the example is written to run from the repository's root.
 */
export function readmeExamplePlugin(root: string): Plugin {
  return {
    name: "readme-client-example",
    resolveId: (id) => (id === ID ? `\0${ID}` : null),
    load(id) {
      if (id !== `\0${ID}`) return null;
      this.addWatchFile(join(root, "README.md"));
      const source = readmeClientExample(root).replaceAll('"./client/', `"${join(root, "client")}/`);
      return transformSync(source, { loader: "ts", format: "esm", target: "es2022" }).code; // types stripped, as Node does
    },
  };
}
