import { createApp } from "./api/app";
import { meteredEnv, meterOn, takeMeter } from "./core/storage-meter";
import type { Env } from "./env";
import { consumeRuns } from "./maintenance/run-queue";
import { runMaintenance } from "./maintenance/sweeper";
import { consumeWebhooks, WEBHOOKS_QUEUE } from "./webhooks";

export { SessionObject } from "./session";
export { TenantLedger } from "./budgets";
export { McpOAuthCredential } from "./mcp/oauth-credential";

const app = createApp();

/** The bench's reading of the storage meter (src/core/storage-meter.ts): only when it is on, only for the admin token. */
function meterReading(request: Request, env: Env): Response | null {
  if (!meterOn(env) || new URL(request.url).pathname !== "/v1/admin/storage-meter") return null;
  if (!env.ADMIN_TOKEN || request.headers.get("authorization") !== `Bearer ${env.ADMIN_TOKEN}`) return null;
  return Response.json(takeMeter());
}

export default {
  fetch: (request, env, ctx) => meterReading(request, env) ?? app.fetch(request, meteredEnv(env), ctx),
  queue: (batch, env) => (batch.queue === WEBHOOKS_QUEUE ? consumeWebhooks(batch, meteredEnv(env)) : consumeRuns(batch, meteredEnv(env))),
  scheduled: (controller, env) => runMaintenance(meteredEnv(env), new Date(controller.scheduledTime)),
} satisfies ExportedHandler<Env, unknown>;
