import { Scalar } from "@scalar/hono-api-reference";
import { Hono } from "hono";
import { PLAYGROUND_HTML } from "./playground";
import type { AppEnv } from "./router";

/** Where the Worker serves the pinned Scalar viewer (wrangler.toml `[assets]`, scripts/copy-docs-viewer.mjs). */
export const DOCS_VIEWER_PATH = "/docs/scalar.js";

/**
 * Pages outside `/v1`, served without a token: `GET /docs` (the interactive reference of
 * `/openapi.json`) and `GET /` (the playground). Both need no network beyond this Worker: the
 * viewer script is a static asset, its default fonts, telemetry and AI agent are off.
 */
export const docsRoutes = new Hono<AppEnv>()
  .get(
    "/docs",
    Scalar({
      url: "/openapi.json",
      pageTitle: "Agentry API reference",
      cdn: DOCS_VIEWER_PATH,
      withDefaultFonts: false,
      telemetry: false,
      agent: { disabled: true },
      mcp: { disabled: true },
      hideClientButton: false,
    }),
  )
  // Deployed, the asset is served before the Worker runs; this route serves it where the Worker is called directly.
  .get(DOCS_VIEWER_PATH, (c) => c.env.ASSETS.fetch(c.req.raw))
  .get("/", (c) => c.html(PLAYGROUND_HTML));
