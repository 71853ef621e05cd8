// Lets the bench import the project's own TypeScript (the offline model, the tests' loopback server):
// Node 22 runs .ts with --experimental-transform-types, but the sources import "./x" without an
// extension (bundler resolution), which Node's resolver does not complete by itself.
import { registerHooks } from "node:module";

registerHooks({
  resolve(specifier, context, nextResolve) {
    const relative = specifier.startsWith("./") || specifier.startsWith("../");
    if (relative && context.parentURL?.endsWith(".ts") && !/\.[cm]?[jt]s$/.test(specifier)) {
      return nextResolve(`${specifier}.ts`, context);
    }
    return nextResolve(specifier, context);
  },
});
