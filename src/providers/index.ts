import { handleMockModel } from "../mock-model/index";
import { AnthropicProvider } from "./anthropic";
import { missingKeyError } from "./errors";
import { OpenAIChatProvider } from "./openai-chat";
import { OpenAIResponsesProvider } from "./openai-responses";
import { inProcessFetch, type SdkClientConfig } from "./sdk-config";
import type { ModelProvider, ProviderName } from "./types";

export { classifyError, isAbortError, ModelCallAbortedError } from "./errors";

/** The provider secrets and base URLs of the Worker's environment. */
export type ProviderEnv = {
  ANTHROPIC_API_KEY?: string;
  OPENAI_API_KEY?: string;
  OPENAI_CHAT_API_KEY?: string;
  ANTHROPIC_BASE_URL?: string;
  OPENAI_BASE_URL?: string;
  OPENAI_CHAT_BASE_URL?: string;
};

/** The provider fields of an agent. */
export type ProviderConfig = {
  provider: ProviderName | "mock";
  base_url?: string | null;
};

/** The base URL that routes an adapter's SDK to the offline model in process. */
export const MOCK_BASE_URL = "mock:";

type Wiring = {
  keys: (env: ProviderEnv) => { secret: string; value: string | undefined };
  baseUrl: (env: ProviderEnv) => string | undefined;
  /**
   * The provider's own base URL, passed explicitly: left undefined, an SDK reads
   * `process.env` (populated from the Worker's vars), so the chat adapter would pick up
   * `OPENAI_BASE_URL`.
   */
  defaultBase: string;
  /** The dummy origin the SDK calls when the offline model answers in process. */
  mockBase: string;
  build: (config: SdkClientConfig) => ModelProvider;
};

const WIRING: Record<ProviderName, Wiring> = {
  anthropic: {
    keys: (env) => ({ secret: "ANTHROPIC_API_KEY", value: env.ANTHROPIC_API_KEY }),
    baseUrl: (env) => env.ANTHROPIC_BASE_URL,
    defaultBase: "https://api.anthropic.com",
    mockBase: "http://mock.local",
    build: (config) => new AnthropicProvider(config),
  },
  openai: {
    keys: (env) => ({ secret: "OPENAI_API_KEY", value: env.OPENAI_API_KEY }),
    baseUrl: (env) => env.OPENAI_BASE_URL,
    defaultBase: "https://api.openai.com/v1",
    mockBase: "http://mock.local/v1",
    build: (config) => new OpenAIResponsesProvider(config),
  },
  "openai-chat": {
    keys: (env) =>
      env.OPENAI_CHAT_API_KEY
        ? { secret: "OPENAI_CHAT_API_KEY", value: env.OPENAI_CHAT_API_KEY }
        : { secret: "OPENAI_CHAT_API_KEY (or OPENAI_API_KEY)", value: env.OPENAI_API_KEY },
    baseUrl: (env) => env.OPENAI_CHAT_BASE_URL,
    defaultBase: "https://api.openai.com/v1",
    mockBase: "http://mock.local/v1",
    build: (config) => new OpenAIChatProvider(config),
  },
};

/**
 * Builds the adapter of an agent's provider (API.md, Agents): `mock` is `anthropic` on
 * `mock:`; the base URL is the agent's, else the environment's, else the SDK's default;
 * `mock:` serves the call from the offline model in process and needs no key. A real
 * provider without its key still returns an adapter, whose calls fail with `auth_error`.
 */
export function createProvider(config: ProviderConfig, env: ProviderEnv): ModelProvider {
  const name: ProviderName = config.provider === "mock" ? "anthropic" : config.provider;
  const wiring = WIRING[name];
  const agentBase = config.provider === "mock" ? MOCK_BASE_URL : config.base_url;
  const baseUrl = agentBase || wiring.baseUrl(env) || wiring.defaultBase;
  if (baseUrl === MOCK_BASE_URL) {
    return wiring.build({ apiKey: "mock-key", baseURL: wiring.mockBase, fetch: inProcessFetch(handleMockModel) });
  }
  const key = wiring.keys(env);
  if (!key.value) return missingKey(name, key.secret);
  return wiring.build({ apiKey: key.value, baseURL: baseUrl });
}

function missingKey(name: ProviderName, secret: string): ModelProvider {
  return {
    name,
    call: () => Promise.reject(missingKeyError(secret)),
  };
}
