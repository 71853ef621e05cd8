import { ChatOpenAI } from "@langchain/openai";
import { ADMIN_TOKEN } from "./http";
import { recordingFetch, type SentRequest } from "./recording-fetch";

/**
 * LangChain's `ChatOpenAI` on the Responses API pointed at the Worker, as a user points it at
 * Agentry: `model` is the agent id, `configuration: { baseURL, fetch }`. `sent` records every request.
 */
export function agentryChatOpenAI(agentId: string, sent: SentRequest[] = [], token: string = ADMIN_TOKEN): ChatOpenAI {
  return new ChatOpenAI({
    model: agentId,
    useResponsesApi: true,
    apiKey: token,
    configuration: { baseURL: "http://agentry.test/v1", fetch: recordingFetch(sent) },
  });
}
