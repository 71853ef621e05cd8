import OpenAI from "openai";
import { fencedFetch, type SdkClientConfig } from "./sdk-config";

/** An `openai` client with the SDK's retries off and nothing read from `process.env`. */
export function createOpenAIClient(config: SdkClientConfig): OpenAI {
  return new OpenAI({
    apiKey: config.apiKey,
    baseURL: config.baseURL,
    fetch: config.fetch ?? fencedFetch,
    defaultHeaders: config.headers,
    maxRetries: 0,
    organization: null,
    project: null,
    webhookSecret: null,
  });
}
