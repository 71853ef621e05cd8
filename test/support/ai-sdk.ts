import { createOpenAI, type OpenAIProvider } from "@ai-sdk/openai";
import { ADMIN_TOKEN } from "./http";
import { recordingFetch, type SentRequest } from "./recording-fetch";

/**
 * The AI SDK's OpenAI provider pointed at the Worker, as a user points it at Agentry:
 * `createOpenAI({ baseURL, apiKey, fetch })`; `provider.responses(agentId)` is the Responses model.
 * `sent` records every request.
 */
export function agentryAISDK(sent: SentRequest[] = [], token: string = ADMIN_TOKEN): OpenAIProvider {
  return createOpenAI({ baseURL: "http://agentry.test/v1", apiKey: token, fetch: recordingFetch(sent) });
}
