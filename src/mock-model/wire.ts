import type { Conversation, InvalidRequest, RequestView } from "./conversation";
import type { ErrorCase, Plan } from "./plan";

/** An answer the model gives (text or tool calls), as opposed to an error. */
export type Answer = Exclude<Plan, { kind: "error" }>;

/** One provider API the offline model speaks: how it reads requests and writes answers and errors. */
export type WireApi = {
  /** Reads the request body; throws `InvalidRequest` when the provider would answer 400. */
  read(body: unknown): RequestView;
  /** The provider's 400 for a body that is not valid JSON or not a valid request. */
  invalid(error: InvalidRequest): Response;
  /** The provider's 401 for a request without credentials. */
  unauthenticated(): Response;
  error(error: ErrorCase): Response;
  answer(conversation: Conversation, answer: Answer, signal: AbortSignal): Promise<Response> | Response;
};
