import { z } from "@hono/zod-openapi";

/** OpenAI's error body, which every `/v1/responses` route answers instead of docs/api.md's. */
export const openAiErrorSchema = z
  .object({
    error: z.object({ message: z.string(), type: z.string(), param: z.string().nullable(), code: z.string().nullable() }),
  })
  .openapi("OpenAIError");
