import { openaiError } from "./errors";
import type { InvalidRequest } from "./conversation";

/** OpenAI's 400 for a body that is not valid JSON or not a valid request. */
export const openaiInvalid = (error: InvalidRequest): Response =>
  openaiError(400, { message: error.message, type: "invalid_request_error", param: error.param });

/** OpenAI's 401 for a request without `Authorization: Bearer`. */
export const openaiUnauthenticated = (): Response =>
  openaiError(401, {
    message:
      "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
    type: "invalid_request_error",
  });
