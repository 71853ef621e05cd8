import { z } from "@hono/zod-openapi";

/** API.md's error body, for the OpenAPI document. */
export const errorSchema = z
  .object({
    error: z.object({
      type: z.string().openapi({ example: "invalid_request" }),
      message: z.string(),
      details: z.record(z.string(), z.unknown()),
    }),
  })
  .openapi("Error");

const errorResponse = (description: string) => ({
  description,
  content: { "application/json": { schema: errorSchema } },
});

/** OpenAPI `responses` entries for the error statuses of API.md. */
export const errorResponses = {
  400: errorResponse("Invalid request (malformed JSON, schema violation, unknown field); details.fields names each path"),
  401: errorResponse("Missing or wrong token"),
  403: errorResponse("A tenant token on an admin route"),
  404: errorResponse("Unknown, deleted or another tenant's"),
  409: errorResponse("Already exists"),
  429: errorResponse("Over the token's request rate; see Retry-After"),
  502: errorResponse("A model call Agentry made for the request failed (type provider_error)"),
};

/** The errors every /v1 route can answer. */
export const authErrors = { 401: errorResponses[401], 429: errorResponses[429] };
