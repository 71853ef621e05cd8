// Copies the pinned Scalar viewer (devDependency @scalar/api-reference) into the Worker's static assets, so `/docs`
// renders with no network beyond the Worker. Run by `npm ci` (postinstall), `npm start`, `npm run build` and the tests.
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const viewer = join(root, "node_modules", "@scalar", "api-reference", "dist", "browser", "standalone.js");
const target = join(root, "public", "docs");

/** Copies `dist/browser/standalone.js` to `public/docs/scalar.js`. */
export function copyDocsViewer() {
  mkdirSync(target, { recursive: true });
  copyFileSync(viewer, join(target, "scalar.js"));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) copyDocsViewer();
