import type { D1Migration } from "cloudflare:test";
import type { Env as AgentryEnv } from "../src/env";

declare global {
  namespace Cloudflare {
    interface Env extends AgentryEnv {
      TEST_MIGRATIONS: D1Migration[];
      /** The offline model served over loopback HTTP by the global setup. */
      MOCK_MODEL_URL: string;
      /** The test tool server (webhook receiver) of the global setup. */
      TOOL_SERVER_URL: string;
      /** A recording upstream (test/node/recording-upstream.ts) in ALLOWED_BASE_URLS: an operator endpoint. */
      GATEWAY_URL: string;
      /** A recording upstream that is no operator endpoint: a tenant's own server, or an attacker's. */
      FOREIGN_UPSTREAM_URL: string;
      /** The MCP test server (test/node/mcp-server.ts): server-everything, per-test buckets in the path. */
      MCP_SERVER_URL: string;
      /** A rate limiter with a small limit, for test/rate-limit.test.ts only (vitest.config.ts). */
      TEST_RATE_LIMITER: RateLimit;
    }
    interface GlobalProps {
      /** Types `exports.default` of "cloudflare:workers" as the Worker's entry. */
      mainModule: typeof import("../src/index");
    }
  }
}
