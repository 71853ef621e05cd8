import { Scalar } from "@scalar/hono-api-reference";
import { Hono } from "hono";
import { PLAYGROUND_HTML } from "./playground";
import type { AppEnv } from "./router";

/**
 * Pages outside `/v1`, served without a token: `GET /docs` (the interactive reference of
 * `/openapi.json`) and `GET /` (the playground). The reference page loads its viewer script
 * from Scalar's CDN in the browser; the playground needs no network beyond this Worker.
 */
export const docsRoutes = new Hono<AppEnv>()
  .get("/docs", Scalar({ url: "/openapi.json", pageTitle: "Agentry API reference" }))
  .get("/", (c) => c.html(PLAYGROUND_HTML));
