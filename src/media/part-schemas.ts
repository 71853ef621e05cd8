import { z } from "@hono/zod-openapi";
import { FILE_TYPES, IMAGE_TYPES } from "./limits";

const textPart = z.strictObject({ type: z.literal("text"), text: z.string() });

const imagePart = z
  .strictObject({
    type: z.literal("image"),
    media_type: z.enum(IMAGE_TYPES).optional().openapi({ description: "Required with `data`; with `url`, the image must be of this type" }),
    data: z.string().optional().openapi({
      description:
        "The image, base64: at most 5 MB as base64 and 8000 px on a side, or 20 MB scaled down when the Images binding is configured (docs/media.md)",
    }),
    url: z.string().optional().openapi({ description: "An https URL, fetched once when the run is created and stored like `data`" }),
  })
  .superRefine((part, ctx) => {
    if ((part.data === undefined) === (part.url === undefined)) {
      ctx.addIssue({ code: "custom", path: [part.data === undefined ? "data" : "url"], message: "an image part has either data or url" });
    } else if (part.data !== undefined && part.media_type === undefined) {
      ctx.addIssue({ code: "custom", path: ["media_type"], message: "required with data" });
    }
  });

const filePart = z.strictObject({
  type: z.literal("file"),
  media_type: z.enum(FILE_TYPES),
  data: z.string().openapi({ description: "The file, base64 (at most 20 MB decoded)" }),
  name: z
    .string()
    .min(1)
    .max(255)
    .regex(/^[^\p{Cc}/\\]+$/u, "no control characters or slashes"),
});

/** A content part of a run's `input` (docs/api.md, Runs). Sizes, base64 and counts are checked by `parseInput`. */
export const contentPart = z.discriminatedUnion("type", [textPart, imagePart, filePart]).openapi("ContentPart");

export type ContentPart = z.infer<typeof contentPart>;
