import { createApp } from "./api/app";
import type { Env } from "./env";

export { SessionObject } from "./session/session-object";

const app = createApp();

export default {
  fetch: (request, env, ctx) => app.fetch(request, env, ctx),
} satisfies ExportedHandler<Env>;
