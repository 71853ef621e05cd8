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

/** An operator endpoint: an origin, and the path segments a URL's path must start with (none: any path). */
type Prefix = { origin: string; segments: string[] };

/** The origin and path segments of an http(s) URL (dot segments resolved, as the URL parser does), or null. */
function prefixOf(url: string): Prefix | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return null;
  return { origin: parsed.origin, segments: parsed.pathname.split("/").filter((segment) => segment !== "") };
}

/** Parsed prefixes per provider, kept while the variables they came from are unchanged (per isolate). */
const parsedPrefixes = new Map<ProviderName, { source: string; prefixes: readonly Prefix[] }>();

/**
 * Where the operator's keys for `provider` may be sent (docs/api.md, Provider credentials): the
 * provider's own default host (any path), and each `*_BASE_URL` / `ALLOWED_BASE_URLS` entry as a
 * URL prefix. A shared gateway host (Cloudflare AI Gateway: `/v1/<account>/<gateway>/…`) puts the
 * tenant boundary in the path, so an entry allows only the paths under its own.
 */
export function operatorPrefixes(provider: ProviderName, env: EndpointEnv): readonly Prefix[] {
  const variable = env[BASE_URL_VARIABLE[provider]] ?? "";
  const allowed = env.ALLOWED_BASE_URLS ?? "";
  const source = JSON.stringify([variable, allowed]);
  const cached = parsedPrefixes.get(provider);
  if (cached?.source === source) return cached.prefixes;
  const defaultOrigin = originOf(DEFAULT_BASE_URLS[provider]) as string;
  const entries = [variable, ...allowed.split(",")]
    .map((url) => prefixOf(url.trim()))
    .filter((prefix): prefix is Prefix => prefix !== null);
  const prefixes = [{ origin: defaultOrigin, segments: [] }, ...entries];
  parsedPrefixes.set(provider, { source, prefixes });
  return prefixes;
}

/**
 * True when `url` is one of the operator's endpoints for `provider`: the same scheme, host and
 * port as an operator prefix, and a path that starts with the prefix's whole path segments
 * (`/v1/acc/gw` allows `/v1/acc/gw/openai`, not `/v1/acc/gw2` nor `/v1/acc/other`).
 */
export function isOperatorEndpoint(provider: ProviderName, url: string, env: EndpointEnv): boolean {
  const target = prefixOf(url);
  if (target === null) return false;
  // An encoded slash, backslash or dot is one segment here, but a proxy that decodes it routes elsewhere.
  const encoded = target.segments.some((segment) => /%(2f|5c|2e)/i.test(segment));
  return operatorPrefixes(provider, env).some(
    (prefix) =>
      prefix.origin === target.origin &&
      (prefix.segments.length === 0 || !encoded) &&
      prefix.segments.every((segment, index) => target.segments[index] === segment),
  );
}
