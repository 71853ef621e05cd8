import { MOCK_BASE_URL } from "../agents/definition";
import { CredentialError, loadCredential } from "../credentials";
import { checkOutboundUrl } from "../core/url-guard";
import { handleMockModel } from "../mock-model/index";
import { AnthropicProvider } from "./anthropic";
import { isOperatorEndpoint, operatorBaseUrl, originOf, type EndpointEnv } from "./endpoints";
import { missingKeyError } from "./errors";
import { OpenAIChatProvider } from "./openai-chat";
import { OpenAIResponsesProvider } from "./openai-responses";
import { operatorHeaders } from "./operator-headers";
import { inProcessFetch, type SdkClientConfig } from "./sdk-config";
import { ProviderError, type ModelProvider, type ProviderName } from "./types";

export { classifyError, isAbortError, ModelCallAbortedError } from "./errors";

/** The provider secrets, base URLs and gateway headers of the Worker's environment. */
export type ProviderEnv = EndpointEnv & {
  ANTHROPIC_API_KEY?: string;
  OPENAI_API_KEY?: string;
  OPENAI_CHAT_API_KEY?: string;
  /** JSON object of extra headers for the operator's endpoints (src/providers/operator-headers.ts). */
  PROVIDER_HEADERS?: string;
};

/** What a call on a tenant's credential also needs: the store and its key. */
export type CredentialEnv = { DB?: D1Database; CREDENTIALS_KEY?: string; ENVIRONMENT?: string; LOOKUP_CACHE_MS?: string };

/** The provider fields of an agent. */
export type ProviderConfig = {
  provider: ProviderName | "mock";
  base_url?: string | null;
  /** The tenant's own credential (`/v1/credentials`); its key goes wherever the agent points. */
  credential?: string | null;
};

type Wiring = {
  key: (env: ProviderEnv) => { secret: string; value: string | undefined };
  /** The dummy origin the SDK calls when the offline model answers in process. */
  mockBase: string;
  build: (config: SdkClientConfig) => ModelProvider;
};

const WIRING: Record<ProviderName, Wiring> = {
  anthropic: {
    key: (env) => ({ secret: "ANTHROPIC_API_KEY", value: env.ANTHROPIC_API_KEY }),
    mockBase: "http://mock.local",
    build: (config) => new AnthropicProvider(config),
  },
  openai: {
    key: (env) => ({ secret: "OPENAI_API_KEY", value: env.OPENAI_API_KEY }),
    mockBase: "http://mock.local/v1",
    build: (config) => new OpenAIResponsesProvider(config),
  },
  "openai-chat": {
    key: (env) =>
      env.OPENAI_CHAT_API_KEY
        ? { secret: "OPENAI_CHAT_API_KEY", value: env.OPENAI_CHAT_API_KEY }
        : { secret: "OPENAI_CHAT_API_KEY (or OPENAI_API_KEY)", value: env.OPENAI_API_KEY },
    mockBase: "http://mock.local/v1",
    build: (config) => new OpenAIChatProvider(config),
  },
};

/** The adapter an agent's `provider` runs on: `mock` is `anthropic` against the offline model. */
export const providerNameOf = (provider: ProviderConfig["provider"]): ProviderName => (provider === "mock" ? "anthropic" : provider);

/**
 * Why an agent's `base_url` may not be used with the operator's keys, or null when it may:
 * the offline model and the operator's endpoints are fine (docs/api.md, Provider credentials).
 */
export function operatorEndpointProblem(config: ProviderConfig, env: EndpointEnv): string | null {
  if (config.provider === "mock" || config.credential || !config.base_url || config.base_url === MOCK_BASE_URL) return null;
  if (isOperatorEndpoint(providerNameOf(config.provider), config.base_url, env)) return null;
  const origin = originOf(config.base_url);
  // Its origin and path, never its query or credentials.
  const shown = origin === null ? "this URL" : `${origin}${new URL(config.base_url).pathname.replace(/\/$/, "")}`;
  return `${shown} is not one of the operator's endpoints for ${config.provider}, so the operator's key is not sent there: give the agent a credential of its own (POST /v1/credentials)`;
}

/**
 * Builds the adapter of an agent's provider (docs/api.md, Agents): the base URL is the agent's,
 * else its credential's, else the operator's (`*_BASE_URL`, else the provider's default);
 * `mock:` serves the call from the offline model in process and needs no key. The operator's
 * key and `PROVIDER_HEADERS` go only to the operator's endpoints; an agent with a credential
 * uses the tenant's key and headers instead (loaded and decrypted at the first call). Any
 * other URL, a missing key or an unusable credential gives an adapter whose calls fail with
 * `auth_error`, so nothing is swapped silently and nothing leaks.
 */
export function createProvider(config: ProviderConfig, env: ProviderEnv & CredentialEnv, tenant = "default"): ModelProvider {
  const name = providerNameOf(config.provider);
  const wiring = WIRING[name];
  const agentBase = config.provider === "mock" ? MOCK_BASE_URL : config.base_url;
  if (agentBase === MOCK_BASE_URL) {
    return wiring.build({ apiKey: "mock-key", baseURL: wiring.mockBase, fetch: inProcessFetch(handleMockModel) });
  }
  const credential = config.credential;
  if (credential) {
    let adapter: Promise<ModelProvider> | undefined;
    return {
      name,
      call: async (request, options) => {
        adapter ??= tenantAdapter(name, credential, agentBase, env, tenant);
        return (await adapter).call(request, options);
      },
    };
  }
  const refused = operatorEndpointProblem(config, env);
  if (refused) return failing(name, new ProviderError("auth_error", `base_url ${refused}`, false));
  const key = wiring.key(env);
  if (!key.value) return failing(name, missingKeyError(key.secret));
  const headers = operatorHeaders(env);
  if (headers instanceof ProviderError) return failing(name, headers);
  return wiring.build({ apiKey: key.value, baseURL: agentBase || operatorBaseUrl(name, env), headers });
}

/** The adapter on a tenant's credential: its key and headers, and the operator's headers only on the operator's endpoints. */
async function tenantAdapter(
  name: ProviderName,
  id: string,
  agentBase: string | null | undefined,
  env: ProviderEnv & CredentialEnv,
  tenant: string,
): Promise<ModelProvider> {
  if (!env.DB) return failing(name, new ProviderError("auth_error", `Credential ${id} cannot be read here`, false));
  let loaded: Awaited<ReturnType<typeof loadCredential>>;
  try {
    loaded = await loadCredential({ DB: env.DB, CREDENTIALS_KEY: env.CREDENTIALS_KEY, LOOKUP_CACHE_MS: env.LOOKUP_CACHE_MS }, tenant, id);
  } catch (error) {
    if (error instanceof CredentialError) return failing(name, new ProviderError("auth_error", error.message, false));
    // D1 did not answer: a transient failure, retried under the run's own budget like a dropped connection.
    return failing(name, new ProviderError("provider_error", `Credential ${id} could not be read; try again`, true));
  }
  const { info, secret } = loaded;
  if (info.provider !== name) {
    return failing(name, new ProviderError("auth_error", `Credential ${id} is for ${info.provider ?? "MCP servers"}, not ${name}`, false));
  }
  const baseURL = agentBase || info.base_url || operatorBaseUrl(name, env);
  let headers = lowerCased(secret.headers);
  if (isOperatorEndpoint(name, baseURL, env)) {
    const operator = operatorHeaders(env);
    if (operator instanceof ProviderError) return failing(name, operator);
    headers = { ...headers, ...lowerCased(operator) };
  } else {
    // Checked when the agent and the credential were stored; again here, as ENVIRONMENT may have changed.
    const refused = checkOutboundUrl(baseURL, env.ENVIRONMENT);
    if (refused) return failing(name, new ProviderError("auth_error", `base_url ${refused}`, false));
  }
  return WIRING[name].build({ apiKey: secret.api_key, baseURL, headers });
}

const lowerCased = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));

function failing(name: ProviderName, error: ProviderError): ModelProvider {
  return { name, call: () => Promise.reject(error) };
}
