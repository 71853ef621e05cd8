import { exports } from "cloudflare:workers";
import OpenAI from "openai";
import { ADMIN_TOKEN } from "./http";

/**
 * The official `openai` SDK pointed at the Worker (`/v1`), as a user would point it at Agentry;
 * `maxRetries` as the SDK's default unless given, so that its retry decisions are exercised.
 */
export function agentryOpenAI(token: string = ADMIN_TOKEN, options: { maxRetries?: number } = {}): OpenAI {
  return new OpenAI({
    apiKey: token,
    baseURL: "http://agentry.test/v1",
    fetch: (input: RequestInfo | URL, init?: RequestInit) => exports.default.fetch(new Request(input, init)),
    ...options,
  });
}
