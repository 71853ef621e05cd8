import { OpenAIProvider, OpenAIResponsesModel, Runner, setTracingDisabled } from "@openai/agents";
import OpenAI from "openai";
import { ADMIN_TOKEN } from "./http";
import { recordingFetch, type SentRequest } from "./recording-fetch";

/** The official `openai` client the Agents SDK is given, pointed at the Worker; `sent` records every request. */
export function agentsOpenAIClient(sent: SentRequest[] = [], token: string = ADMIN_TOKEN): OpenAI {
  return new OpenAI({ apiKey: token, baseURL: "http://agentry.test/v1", fetch: recordingFetch(sent) });
}

/**
 * An `@openai/agents` Runner whose model provider is the OpenAI provider over the Worker (the
 * Responses API, over HTTP), as a user points the Agents SDK at Agentry:
 * `new OpenAIProvider({ openAIClient })`, tracing off (it would export to api.openai.com).
 * An `Agent`'s `model` is then the Agentry agent id.
 */
export function agentryRunner(sent: SentRequest[] = [], token: string = ADMIN_TOKEN): Runner {
  setTracingDisabled(true);
  const openAIClient = agentsOpenAIClient(sent, token);
  return new Runner({ modelProvider: new OpenAIProvider({ openAIClient, useResponses: true }), tracingDisabled: true });
}

/** The Responses model of the Agents SDK for one Agentry agent (`new OpenAIResponsesModel(client, agentId)`). */
export function agentryResponsesModel(agentId: string, sent: SentRequest[] = [], token: string = ADMIN_TOKEN): OpenAIResponsesModel {
  setTracingDisabled(true);
  return new OpenAIResponsesModel(agentsOpenAIClient(sent, token), agentId);
}
