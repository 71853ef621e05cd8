// What the bench and the profiler run against: the fake provider, Agentry as `npm start` runs it (with
// temporary state and secrets), a tenant and an agent with the builtin `current_time` calling the provider.
import { randomBytes } from "node:crypto";
import { createAgent, createTenant } from "./agentry-client.mjs";
import { startAgentry } from "./agentry-server.mjs";
import { startFakeProvider } from "./fake-provider.mjs";

/**
 * Starts the stack under `dir`; `stop()` ends both servers (it is safe to call after a failed start).
 * @param {string} dir
 * @param {{ inspectorPort?: number | null, onStep?: (what: string) => void, vars?: Record<string, string> }} [options]
 */
export async function startStack(dir, { inspectorPort = null, onStep = () => {}, vars = {} } = {}) {
  const adminToken = `bench-admin-${randomBytes(8).toString("hex")}`;
  /** @type {{ provider: Awaited<ReturnType<typeof startFakeProvider>> | null, agentry: Awaited<ReturnType<typeof startAgentry>> | null }} */
  const servers = { provider: null, agentry: null };
  const stop = async () => {
    await servers.agentry?.stop();
    await servers.provider?.close();
  };
  const provider = await startFakeProvider();
  servers.provider = provider;
  onStep(`fake provider on ${provider.origin}; starting wrangler dev`);
  const agentry = await startAgentry({
    dir,
    inspectorPort,
    vars,
    secrets: {
      ADMIN_TOKEN: adminToken,
      WEBHOOK_SECRET: randomBytes(16).toString("hex"),
      CREDENTIALS_KEY: randomBytes(32).toString("base64"),
      ANTHROPIC_API_KEY: "sk-ant-bench-operator-key",
      ALLOWED_BASE_URLS: provider.origin,
    },
  });
  servers.agentry = agentry;
  onStep(`Agentry on ${agentry.origin} (log: ${agentry.logPath})`);
  const tenant = await createTenant(agentry.origin, adminToken, "bench");
  const agentId = await createAgent(tenant, provider.origin);
  return { adminToken, provider, agentry, tenant, agentId, stop };
}
