import { anthropicApi } from "./anthropic";
import { attemptOf, InvalidRequest, summarize } from "./conversation";
import { chatApi } from "./openai-chat";
import { responsesApi } from "./openai-responses";
import { decide } from "./plan";
import { parseJson } from "./values";
import type { WireApi } from "./wire";

/** Routes by path suffix, so any base URL prefix works (`http://mock.local`, `…/v1`, `mock:`). */
const ROUTES: { suffix: string; api: WireApi; unparsable: string }[] = [
  {
    suffix: "/messages",
    api: anthropicApi,
    unparsable: "There was an error parsing the body of your request. Please make sure it is valid JSON.",
  },
  {
    suffix: "/responses",
    api: responsesApi,
    unparsable: "We could not parse the JSON body of your request. The OpenAI API expects a JSON payload.",
  },
  {
    suffix: "/chat/completions",
    api: chatApi,
    unparsable: "We could not parse the JSON body of your request. The OpenAI API expects a JSON payload.",
  },
];

function routeError(status: number, message: string): Response {
  // The Anthropic error shape, which the OpenAI SDK also reads (it takes the body's `error`).
  const type = status === 404 ? "not_found_error" : "invalid_request_error";
  return Response.json({ type: "error", error: { type, message } }, { status });
}

/**
 * The largest body each API takes, in bytes. Anthropic's edge answers a larger one with 413
 * `request_too_large` before the API reads it (docs/vendor-limits.md, A52); OpenAI documents no
 * whole-request cap below its per-item ones for these routes.
 */
const MAX_BODY_BYTES: Record<string, number> = { "/messages": 32 * 1024 * 1024 };

const hasCredentials = (request: Request): boolean => Boolean(request.headers.get("x-api-key") || request.headers.get("authorization"));

/**
 * The offline model: answers the Anthropic Messages, OpenAI Responses and OpenAI Chat
 * Completions APIs in their real wire formats (JSON, and SSE for `stream: true`), obeying the
 * directives of the last user message (docs/api.md, "The offline model"). Web-standard APIs only,
 * so it runs in workerd and in Node alike.
 */
export async function handleMockModel(request: Request): Promise<Response> {
  const path = new URL(request.url).pathname.replace(/\/+$/, "");
  const route = ROUTES.find(({ suffix }) => path.endsWith(suffix));
  if (!route) return routeError(404, `Not found: ${path || "/"}`);
  if (request.method !== "POST") return routeError(405, `Method ${request.method} not allowed`);
  const { api } = route;
  if (!hasCredentials(request)) return api.unauthenticated();

  const raw = await request.text();
  const maxBody = MAX_BODY_BYTES[route.suffix];
  if (maxBody !== undefined && new TextEncoder().encode(raw).byteLength > maxBody) {
    return api.error({ kind: "status", status: 413, retryAfter: null, shouldRetry: null });
  }
  const body = parseJson(raw);
  if (body === undefined) return api.invalid(new InvalidRequest(route.unparsable));
  let conversation: ReturnType<typeof summarize>;
  try {
    conversation = summarize(api.read(body), raw.length, attemptOf(request));
  } catch (error) {
    if (error instanceof InvalidRequest) return api.invalid(error);
    throw error;
  }
  const plan = decide(conversation);
  if (plan.kind === "error") return api.error(plan.error);
  return api.answer(conversation, plan, request.signal);
}
