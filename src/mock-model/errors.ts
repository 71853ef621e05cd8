import { randomId } from "./ids";
import type { ErrorCase } from "./plan";

/** Anthropic error `type` and message per HTTP status, as the Messages API sends them. */
const ANTHROPIC: Record<number, [type: string, message: string]> = {
  400: ["invalid_request_error", "Invalid request."],
  401: ["authentication_error", "invalid x-api-key"],
  402: ["billing_error", "Your organization's billing needs attention. Please go to Plans & Billing."],
  403: ["permission_error", "Your API key does not have permission to use the specified resource."],
  404: ["not_found_error", "Not found."],
  408: ["timeout_error", "Request timed out."],
  409: ["conflict_error", "Conflict."],
  413: ["request_too_large", "Request exceeds the maximum allowed number of bytes."],
  429: [
    "rate_limit_error",
    "This request would exceed the rate limit for your organization of 50 requests per minute. Please reduce the prompt length or the maximum tokens requested, or try again later.",
  ],
  500: ["api_error", "Internal server error"],
  504: ["timeout_error", "Request timed out."],
  529: ["overloaded_error", "Overloaded"],
};

/** OpenAI `error` fields per HTTP status: message, type, code. */
const OPENAI: Record<number, [message: string, type: string, code: string | null]> = {
  400: ["Invalid request.", "invalid_request_error", null],
  401: [
    "Incorrect API key provided: sk-mock. You can find your API key at https://platform.openai.com/account/api-keys.",
    "invalid_request_error",
    "invalid_api_key",
  ],
  402: ["Payment required. Please check your plan and billing details.", "invalid_request_error", "billing_not_active"],
  403: ["Country, region, or territory not supported", "request_forbidden", "unsupported_country_region_territory"],
  404: ["The model does not exist or you do not have access to it.", "invalid_request_error", "model_not_found"],
  408: ["Request timed out.", "timeout", null],
  409: ["Conflict.", "invalid_request_error", null],
  413: ["Request too large.", "invalid_request_error", "request_too_large"],
  422: ["Unprocessable request.", "invalid_request_error", null],
  429: [
    "Rate limit reached for requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s. Visit https://platform.openai.com/account/rate-limits to learn more.",
    "requests",
    "rate_limit_exceeded",
  ],
  500: ["The server had an error while processing your request. Sorry about that!", "server_error", "server_error"],
  502: ["Bad gateway.", "server_error", null],
  503: ["The engine is currently overloaded, please try again later.", "server_error", null],
  504: ["Gateway timeout.", "server_error", null],
  529: ["The engine is currently overloaded, please try again later.", "server_error", null],
};

const CREDIT_TOO_LOW =
  "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.";
const QUOTA = "You exceeded your current quota, please check your plan and billing details.";
const CONTEXT = {
  responses: "Your input exceeds the context window of this model. Please adjust your input and try again.",
  chat: "This model's maximum context length is 128000 tokens. However, your messages resulted in 250000 tokens. Please reduce the length of the messages.",
};
/** Anthropic's context error when the input fits but input + `max_tokens` does not. */
const ANTHROPIC_CONTEXT_LIMIT =
  "input length and `max_tokens` exceed context limit: 199759 + 8192 > 200000, decrease input length or `max_tokens` and try again";
/** OpenAI Chat's older wording of the same case. */
const CHAT_CONTEXT_LIMIT =
  "This model's maximum context length is 128000 tokens. However, you requested 136192 tokens (128000 in the messages, 8192 in the completion). Please reduce the length of the messages or completion.";
/** OpenAI's 429 for one request larger than the organization's tokens-per-minute limit: it can never succeed. */
const TPM_TOO_LARGE =
  "Request too large for mock-1 in organization org-mock on tokens per min (TPM): Limit 30000, Requested 250000. The input or output tokens must be reduced in order to run successfully. Visit https://platform.openai.com/account/rate-limits to learn more.";
/** Anthropic's 429 for a request over the input-tokens-per-minute limit (it does not say whether waiting helps). */
const ANTHROPIC_ITPM =
  "This request would exceed the rate limit for your organization (org-mock) of 30,000 input tokens per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later. You may also contact sales at https://www.anthropic.com/contact-sales to discuss your options for a rate limit increase.";

/** Anthropic's 400 once the workspace's spend limit set in the Console is reached, until the first of next month. */
function usageLimitsMessage(now = new Date()): string {
  const next = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return `You have reached your specified API usage limits. You will regain access on ${next.toISOString().slice(0, 10)} at 00:00 UTC.`;
}

/** Message and `type` of OpenAI error codes, for errors that arrive inside a stream. */
const OPENAI_CODES: Record<string, [message: string, type: string]> = {
  server_error: ["The server had an error while processing your request. Sorry about that!", "server_error"],
  rate_limit_exceeded: [
    "Rate limit reached for mock-1 in organization org-mock on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000. Please try again in 2s. Visit https://platform.openai.com/account/rate-limits to learn more.",
    "tokens",
  ],
  insufficient_quota: [QUOTA, "insufficient_quota"],
  context_length_exceeded: [CONTEXT.responses, "invalid_request_error"],
  invalid_prompt: [
    "Invalid prompt: your prompt was flagged as potentially violating our usage policy. Please try again with a different prompt.",
    "invalid_request_error",
  ],
};

/** The message Anthropic sends with an error `type`. */
export const anthropicMessageOf = (type: string): string =>
  Object.values(ANTHROPIC).find(([known]) => known === type)?.[1] ?? "An error occurred.";

/** The message and `type` OpenAI sends with an error `code` (an unknown code is its own type). */
export const openaiErrorOfCode = (code: string): { message: string; type: string } => {
  const [message, type] = OPENAI_CODES[code] ?? ["An error occurred while processing your request.", code];
  return { message, type };
};

/** `retry-after` and `x-should-retry`, when set. */
function retryHeaders(retryAfter: string | null, shouldRetry: string | null): Record<string, string> {
  return {
    ...(retryAfter === null ? {} : { "retry-after": retryAfter }),
    ...(shouldRetry === null ? {} : { "x-should-retry": shouldRetry }),
  };
}

function json(status: number, body: unknown, headers: Record<string, string>): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

/** An Anthropic error response: `{ type: "error", error: { type, message }, request_id }`. */
export function anthropicError(
  status: number,
  type: string,
  message: string,
  retryAfter: string | null = null,
  shouldRetry: string | null = null,
) {
  const requestId = randomId("req_");
  const headers = { "request-id": requestId, ...retryHeaders(retryAfter, shouldRetry) };
  return json(status, { type: "error", error: { type, message }, request_id: requestId }, headers);
}

/** An OpenAI error response: `{ error: { message, type, param, code } }`. */
export function openaiError(
  status: number,
  fields: { message: string; type: string; param?: string | null; code?: string | null },
  retryAfter: string | null = null,
  shouldRetry: string | null = null,
) {
  const headers = { "x-request-id": randomId("req_", 32), ...retryHeaders(retryAfter, shouldRetry) };
  const { message, type, param = null, code = null } = fields;
  return json(status, { error: { message, type, param, code } }, headers);
}

/** Renders a planned error as the Anthropic Messages API does. */
export function anthropicErrorFor(error: ErrorCase): Response {
  switch (error.kind) {
    case "quota":
      return anthropicError(400, "invalid_request_error", CREDIT_TOO_LOW);
    case "context_overflow":
      return anthropicError(400, "invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum");
    case "usage_limits":
      return anthropicError(400, "invalid_request_error", usageLimitsMessage());
    case "context_limit":
      return anthropicError(400, "invalid_request_error", ANTHROPIC_CONTEXT_LIMIT);
    case "tpm_limit":
      return anthropicError(429, "rate_limit_error", ANTHROPIC_ITPM);
    case "status": {
      const fallback = error.status >= 500 ? "api_error" : "invalid_request_error";
      const [type, message] = ANTHROPIC[error.status] ?? [fallback, `Error ${error.status}`];
      return anthropicError(error.status, type, message, error.retryAfter, error.shouldRetry);
    }
  }
}

/** Renders a planned error as the OpenAI Responses (`api: "responses"`) or Chat Completions API does. */
export function openaiErrorFor(error: ErrorCase, api: "responses" | "chat"): Response {
  switch (error.kind) {
    // OpenAI has no separate usage-limits error: a spent budget is its quota error.
    case "quota":
    case "usage_limits":
      return openaiError(429, { message: QUOTA, type: "insufficient_quota", code: "insufficient_quota" });
    case "context_overflow":
    case "context_limit": {
      const param = api === "chat" ? "messages" : "input";
      const message = error.kind === "context_limit" && api === "chat" ? CHAT_CONTEXT_LIMIT : CONTEXT[api];
      return openaiError(400, { message, type: "invalid_request_error", param, code: "context_length_exceeded" });
    }
    case "tpm_limit":
      return openaiError(429, { message: TPM_TOO_LARGE, type: "tokens", code: "rate_limit_exceeded" });
    case "status": {
      const fallback = error.status >= 500 ? "server_error" : "invalid_request_error";
      const [message, type, code] = OPENAI[error.status] ?? [`Error ${error.status}`, fallback, null];
      return openaiError(error.status, { message, type, code }, error.retryAfter, error.shouldRetry);
    }
  }
}
