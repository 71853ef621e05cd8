import type { ProviderName } from "./types";

/** The operator's provider settings: where its keys may go. */
export type EndpointEnv = {
  ANTHROPIC_BASE_URL?: string;
  OPENAI_BASE_URL?: string;
  OPENAI_CHAT_BASE_URL?: string;
  /** Comma-separated base URLs (or origins) the operator's keys may also go to, e.g. an AI Gateway. */
  ALLOWED_BASE_URLS?: string;
};

/**
 * The provider's own base URL, passed explicitly: left undefined, an SDK reads `process.env`
 * (populated from the Worker's vars), so the chat adapter would pick up `OPENAI_BASE_URL`.
 */
export const DEFAULT_BASE_URLS: Record<ProviderName, string> = {
  anthropic: "https://api.anthropic.com",
  openai: "https://api.openai.com/v1",
  "openai-chat": "https://api.openai.com/v1",
};

const BASE_URL_VARIABLE = {
  anthropic: "ANTHROPIC_BASE_URL",
  openai: "OPENAI_BASE_URL",
  "openai-chat": "OPENAI_CHAT_BASE_URL",
} as const satisfies Record<ProviderName, keyof EndpointEnv>;

/** The operator's base URL for a provider: its `*_BASE_URL` variable, else the provider's default. */
export function operatorBaseUrl(provider: ProviderName, env: EndpointEnv): string {
  return env[BASE_URL_VARIABLE[provider]] || DEFAULT_BASE_URLS[provider];
}

/**
 * The normalised origin (scheme, host, port; default ports dropped, host lower-cased and
 * punycoded) of an http(s) URL, or null when it is not one.
 */
export function originOf(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  return parsed.protocol === "https:" || parsed.protocol === "http:" ? parsed.origin : null;
}

/** Parsed origins per provider, kept while the variables they came from are unchanged (per isolate). */
const parsedOrigins = new Map<ProviderName, { source: string; origins: ReadonlySet<string> }>();

/** The origins the operator's keys for `provider` may be sent to (API.md, Provider credentials). */
export function operatorOrigins(provider: ProviderName, env: EndpointEnv): ReadonlySet<string> {
  const variable = env[BASE_URL_VARIABLE[provider]] ?? "";
  const allowed = env.ALLOWED_BASE_URLS ?? "";
  const source = JSON.stringify([variable, allowed]);
  const cached = parsedOrigins.get(provider);
  if (cached?.source === source) return cached.origins;
  const urls = [DEFAULT_BASE_URLS[provider], variable, ...allowed.split(",")];
  const origins = new Set(urls.map((url) => originOf(url.trim())).filter((origin): origin is string => origin !== null));
  parsedOrigins.set(provider, { source, origins });
  return origins;
}

/**
 * True when `url` is one of the operator's endpoints for `provider`: its origin is exactly the
 * provider default's, the `*_BASE_URL` variable's or one in `ALLOWED_BASE_URLS`. Any path under
 * such an origin is fine.
 */
export function isOperatorEndpoint(provider: ProviderName, url: string, env: EndpointEnv): boolean {
  const origin = originOf(url);
  return origin !== null && operatorOrigins(provider, env).has(origin);
}
