// What the bench and the profiler run against: the fake provider, Agentry as `npm start` runs it (with
// temporary state and secrets), a tenant and an agent with the builtin `current_time` calling the provider.
import { randomBytes } from "node:crypto";
import { createAgent, createTenant } from "./agentry-client.mjs";
import { startAgentry } from "./agentry-server.mjs";
import { startFakeProvider } from "./fake-provider.mjs";

/** Starts the stack under `dir`; `stop()` ends both servers (it is safe to call after a failed start). */
export async function startStack(dir, { inspectorPort = null, onStep = () => {} } = {}) {
  const adminToken = `bench-admin-${randomBytes(8).toString("hex")}`;
  const stack = { adminToken, provider: null, agentry: null, tenant: null, agentId: null };
  stack.stop = async () => {
    await stack.agentry?.stop();
    await stack.provider?.close();
  };
  stack.provider = await startFakeProvider();
  onStep(`fake provider on ${stack.provider.origin}; starting wrangler dev`);
  stack.agentry = await startAgentry({
    dir,
    inspectorPort,
    secrets: {
      ADMIN_TOKEN: adminToken,
      WEBHOOK_SECRET: randomBytes(16).toString("hex"),
      CREDENTIALS_KEY: randomBytes(32).toString("base64"),
      ANTHROPIC_API_KEY: "sk-ant-bench-operator-key",
      ALLOWED_BASE_URLS: stack.provider.origin,
    },
  });
  onStep(`Agentry on ${stack.agentry.origin} (log: ${stack.agentry.logPath})`);
  stack.tenant = await createTenant(stack.agentry.origin, adminToken, "bench");
  stack.agentId = await createAgent(stack.tenant, stack.provider.origin);
  return stack;
}
