import { createApp } from "./api/app";
import type { Env } from "./env";
import { consumeRuns } from "./maintenance/run-queue";
import { runMaintenance } from "./maintenance/sweeper";

export { SessionObject } from "./session";
export { TenantLedger } from "./budgets";

const app = createApp();

export default {
  fetch: (request, env, ctx) => app.fetch(request, env, ctx),
  queue: (batch, env) => consumeRuns(batch, env),
  scheduled: (controller, env) => runMaintenance(env, new Date(controller.scheduledTime)),
} satisfies ExportedHandler<Env, unknown>;
