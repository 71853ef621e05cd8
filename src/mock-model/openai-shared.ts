import { openaiError } from "./errors";
import type { InvalidRequest } from "./conversation";
import { REFUSAL_TEXT, splitWords } from "./plan";
import type { Answer } from "./wire";

/** OpenAI's 400 for a body that is not valid JSON or not a valid request. */
export const openaiInvalid = (error: InvalidRequest): Response =>
  openaiError(400, { message: error.message, type: "invalid_request_error", param: error.param, code: error.code });

/** OpenAI's 401 for a request without `Authorization: Bearer`. */
export const openaiUnauthenticated = (): Response =>
  openaiError(401, {
    message:
      "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
    type: "invalid_request_error",
  });

/** The answer as OpenAI models give it: a refusal is a refusal message, not the start of the answer. */
export const openaiAnswer = (answer: Answer): Answer =>
  answer.kind === "text" && answer.stop === "refusal" ? { ...answer, text: REFUSAL_TEXT, deltas: splitWords(REFUSAL_TEXT) } : answer;
