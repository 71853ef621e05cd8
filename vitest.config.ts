import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { copyDocsViewer } from "./scripts/copy-docs-viewer.mjs";
import { readmeExamplePlugin } from "./test/node/readme-example-plugin.ts";

copyDocsViewer();

export default defineConfig({
  plugins: [
    readmeExamplePlugin(import.meta.dirname),
    cloudflareTest(async ({ inject }) => ({
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        bindings: {
          ENVIRONMENT: "development",
          ADMIN_TOKEN: "test-admin-token",
          WEBHOOK_SECRET: "test-webhook-secret",
          // Lifecycle webhooks (docs/webhooks.md): retries at once instead of after 5 s, 30 s, …; a hung receiver fails in 300 ms.
          WEBHOOK_RETRY_SCALE: "0",
          WEBHOOK_TIMEOUT_MS: "300",
          // 32 bytes in base64 (src/credentials/crypto.ts).
          CREDENTIALS_KEY: "YWdlbnRyeS10ZXN0LWNyZWRlbnRpYWxzLWtleS0zMmI=",
          // Fake keys: the offline model accepts any key; tests check that none ever leaks.
          ANTHROPIC_API_KEY: "sk-ant-test-secret-0123456789",
          OPENAI_API_KEY: "sk-openai-test-secret-0123456789",
          OPENAI_CHAT_API_KEY: "operator-chat-test-secret-0123456789",
          // The operator's endpoints besides the providers' defaults: the loopback offline model, and
          // three routes of a recording gateway (its other paths, e.g. `/bx/…`, are not the operator's).
          ALLOWED_BASE_URLS: ["", "/b", "/echo", "/redirect"]
            .map((path) => (path === "" ? inject<string>("mockModelUrl") : `${inject<string>("gatewayUrl")}${path}`))
            .join(", "),
          PROVIDER_HEADERS: JSON.stringify({ "cf-aig-authorization": "Bearer operator-gateway-test-token-42" }),
          TEST_MIGRATIONS: await readD1Migrations("./migrations"),
          MOCK_MODEL_URL: inject<string>("mockModelUrl"),
          TOOL_SERVER_URL: inject<string>("toolServerUrl"),
          GATEWAY_URL: inject<string>("gatewayUrl"),
          FOREIGN_UPSTREAM_URL: inject<string>("foreignUpstreamUrl"),
          MCP_SERVER_URL: inject<string>("mcpServerUrl"),
        },
        ratelimits: {
          // Test files share the admin token's counter: keep them far from any limit.
          RATE_LIMITER: { namespace_id: "1001", simple: { limit: 1_000_000, period: 10 } },
          // Only test/rate-limit.test.ts uses this one, with its own tenant tokens.
          TEST_RATE_LIMITER: { namespace_id: "1002", simple: { limit: 5, period: 10 } },
        },
      },
    })),
  ],
  test: {
    globalSetup: ["./test/node/global-setup.ts"],
    setupFiles: ["./test/apply-migrations.ts"],
    testTimeout: 20_000,
    // One workerd per Vitest worker, reused by the files it runs, instead of one per file: starting
    // workerd was most of the suite's time. Files then share D1, R2 and the objects of their worker,
    // so every test makes its own tenants, agents and sessions and asserts only on what it made.
    isolate: false,
    // Structured log lines of passing tests are noise; a failing test shows its own.
    silent: "passed-only",
  },
});
