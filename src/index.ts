import { createApp } from "./api/app";
import type { Env } from "./env";
import { consumeRuns } from "./maintenance/run-queue";
import { runMaintenance } from "./maintenance/sweeper";
import { consumeWebhooks, WEBHOOKS_QUEUE } from "./webhooks";

export { SessionObject } from "./session";

const app = createApp();

export default {
  fetch: (request, env, ctx) => app.fetch(request, env, ctx),
  queue: (batch, env) => (batch.queue === WEBHOOKS_QUEUE ? consumeWebhooks(batch, env) : consumeRuns(batch, env)),
  scheduled: (controller, env) => runMaintenance(env, new Date(controller.scheduledTime)),
} satisfies ExportedHandler<Env, unknown>;
