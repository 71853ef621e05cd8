import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { handleMockModel } from "../../src/mock-model/index";

/** SDK options that send every request to the offline model in process, recording its bodies. */
function mockTransport(attempt: number | undefined, bodies: string[]) {
  return {
    maxRetries: 0,
    defaultHeaders: attempt === undefined ? {} : { "x-agentry-attempt": String(attempt) },
    fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
      if (typeof init?.body === "string") bodies.push(init.body);
      return handleMockModel(new Request(input, init));
    },
  };
}

/** A real Anthropic client whose fetch is the offline model; `bodies` records what it sent. */
export function anthropicClient(attempt?: number) {
  const bodies: string[] = [];
  const anthropic = new Anthropic({ apiKey: "sk-ant-test", baseURL: "http://mock.local", ...mockTransport(attempt, bodies) });
  return { anthropic, bodies };
}

/** A real OpenAI client (Responses and Chat Completions) whose fetch is the offline model. */
export function openaiClient(attempt?: number) {
  const bodies: string[] = [];
  const openai = new OpenAI({ apiKey: "sk-test", baseURL: "http://mock.local/v1", ...mockTransport(attempt, bodies) });
  return { openai, bodies };
}
