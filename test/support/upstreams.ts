import { env } from "cloudflare:workers";
import type { ProviderName } from "../../src/providers/types";

/** The three real adapters. */
export const PROVIDERS: ProviderName[] = ["anthropic", "openai", "openai-chat"];

/** The operator's gateway header value (`PROVIDER_HEADERS` in vitest.config.ts). */
export const OPERATOR_GATEWAY_TOKEN = "operator-gateway-test-token-42";

/** The operator's provider keys of the test environment. */
export const OPERATOR_KEYS = [env.ANTHROPIC_API_KEY, env.OPENAI_API_KEY, env.OPENAI_CHAT_API_KEY].map(String);

/**
 * A provider's base URL under a recording upstream's route (test/node/recording-upstream.ts):
 * `b` answers as the offline model, `echo` echoes the headers in an error, `redirect` redirects.
 */
export const upstreamBase = (upstream: string, bucket: string, provider: ProviderName, route: "b" | "echo" | "redirect" = "b") =>
  `${upstream}/${route}/${bucket}${provider === "anthropic" ? "" : "/v1"}`;

/** What a recording upstream's bucket received. */
export const requestsOf = async (upstream: string, bucket: string) =>
  (await fetch(`${upstream}/requests/${bucket}`)).json<
    { method: string; path: string; headers: Record<string, string>; body: Record<string, unknown> | null }[]
  >();

/** The key a provider request carried: Anthropic's `x-api-key` or OpenAI's bearer token. */
export const keyOf = (headers: Record<string, string> | undefined) =>
  headers?.["x-api-key"] ?? headers?.authorization?.replace(/^Bearer /, "");
