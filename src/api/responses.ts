import { z } from "@hono/zod-openapi";
import { API_ERROR_TYPES } from "./errors";

/** docs/api.md's error body, for the OpenAPI document. */
export const errorSchema = z
  .object({
    error: z.object({
      type: z.enum(API_ERROR_TYPES).openapi({ example: "invalid_request" }),
      message: z.string(),
      details: z.record(z.string(), z.unknown()),
    }),
  })
  .openapi("Error");

const errorResponse = (description: string) => ({
  description,
  content: { "application/json": { schema: errorSchema } },
});

/** OpenAPI `responses` entries for the error statuses of docs/api.md. */
export const errorResponses = {
  400: errorResponse("Invalid request (malformed JSON, schema violation, unknown field); details.fields names each path"),
  401: errorResponse("Missing or wrong token"),
  403: errorResponse("A tenant token on an admin route"),
  404: errorResponse("Unknown, deleted or another tenant's"),
  409: errorResponse("Already exists"),
  413: errorResponse("The request body is over 25 MB (type payload_too_large)"),
  429: {
    ...errorResponse(
      "Over the token's request rate (rate_limited); or, where a model call would be made, a spent budget (budget_exceeded, details.budget_id and resets_at)",
    ),
    headers: {
      "Retry-After": {
        description: "Seconds to wait before the next request (a spent budget: until its period resets; none for a total budget)",
        schema: { type: "integer" as const, minimum: 0 },
      },
    },
  },
  500: errorResponse("An unexpected error (type internal); nothing secret is in the body"),
  502: errorResponse("A model call Agentry made for the request failed (type provider_error)"),
};

/** The errors every /v1 route can answer. */
export const authErrors = { 401: errorResponses[401], 429: errorResponses[429], 500: errorResponses[500] };

/** The errors of every /v1 route that takes a request body: the auth errors, 400 and 413. */
export const bodyErrors = { ...authErrors, 400: errorResponses[400], 413: errorResponses[413] };
