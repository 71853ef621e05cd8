import { sha256Hex } from "../core/hash";

/**
 * The prompt-cache key of a session: SHA-256 hex of its tenant and id. 64 characters, OpenAI's
 * limit for `prompt_cache_key` (client-chosen session ids may have 128); stable across the
 * session's turns, forks and providers, and it shows neither id to the provider.
 */
export const promptCacheKey = (tenant: string, sessionId: string): Promise<string> => sha256Hex(JSON.stringify([tenant, sessionId]));
