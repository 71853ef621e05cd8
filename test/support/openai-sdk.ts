import { exports } from "cloudflare:workers";
import OpenAI from "openai";
import { ADMIN_TOKEN } from "./http";

/**
 * The official `openai` SDK pointed at the Worker (`/v1`), as a user would point it at Agentry,
 * with the SDK's own retry policy; `sent` records each HTTP request it made (`POST /v1/responses`).
 */
export function agentryOpenAI(token: string = ADMIN_TOKEN, sent: string[] = []): OpenAI {
  return new OpenAI({
    apiKey: token,
    baseURL: "http://agentry.test/v1",
    fetch: (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      sent.push(`${request.method} ${new URL(request.url).pathname}`);
      return exports.default.fetch(request);
    },
  });
}
