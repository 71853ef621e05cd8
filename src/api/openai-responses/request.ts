import { z } from "@hono/zod-openapi";
import { objectJsonSchema, TOOL_NAME } from "../../agents";
import { CLIENT_ID } from "../../core/ids";
import type { ContentPart } from "../../media";
import { FILE_TYPES, IMAGE_TYPES, type FileType, type ImageType } from "../../media/limits";

/** `data:<media type>;base64,<data>`, the only inline form OpenAI's `image_url` and `file_data` take. */
const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

const dataUrlOf = (types: readonly string[]) =>
  z.string().refine((url) => {
    const match = DATA_URL.exec(url);
    return match !== null && types.includes(match[1] as string);
  }, `must be a base64 data URL of type ${types.join(", ")}`);

const inputText = z.strictObject({ type: z.literal("input_text"), text: z.string() });

const inputImage = z.strictObject({
  type: z.literal("input_image"),
  image_url: z.union([
    dataUrlOf(IMAGE_TYPES).openapi({ description: "A base64 data URL of a PNG, JPEG, GIF or WebP image", pattern: "^data:" }),
    z.string().startsWith("https://", "must be an https URL or a base64 data URL").openapi({ description: "An https URL", format: "uri" }),
  ]),
  detail: z.literal("auto", "only auto: Agentry sends the image as it is").optional(),
});

const inputFile = z.strictObject({
  type: z.literal("input_file"),
  file_data: dataUrlOf(FILE_TYPES),
  filename: z.string().min(1).max(255),
});

const inputContent = z.discriminatedUnion("type", [inputText, inputImage, inputFile]);

/** A user message: OpenAI's `EasyInputMessage` or `message` input item, user role only. */
const userMessage = z.strictObject({
  type: z.literal("message"),
  role: z.literal("user", "only user messages: the agent's instructions and the session's history are Agentry's"),
  content: z.union([z.string(), z.array(inputContent).min(1)]),
});

/** A client function tool's result, answering a `function_call` of the previous response. */
const functionCallOutput = z.strictObject({
  type: z.literal("function_call_output"),
  call_id: z.string().min(1),
  output: z.string(),
  id: z.string().nullable().optional(),
  status: z.enum(["in_progress", "completed", "incomplete"]).nullable().optional(),
});

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** An item without `type` is a message (OpenAI's `EasyInputMessage`); errors then name the field inside the item's own kind. */
const inputItem = z.preprocess(
  (item) => (isRecord(item) && !("type" in item) ? { ...item, type: "message" } : item),
  z.discriminatedUnion("type", [userMessage, functionCallOutput]),
);

export type FunctionCallOutput = z.infer<typeof functionCallOutput>;

/** A client function tool of the request: the run pauses on its calls (an Agentry `client` tool). */
const functionTool = z.strictObject({
  type: z.literal("function", "only function tools: the agent's own tools run inside Agentry"),
  name: z.string().regex(TOOL_NAME, "must match ^[a-zA-Z0-9_-]{1,64}$"),
  description: z.string().max(4096).nullable().optional(),
  parameters: objectJsonSchema.nullable().optional(),
  strict: z.literal(false, "strict function calling is not supported: arguments are not checked against parameters").nullable().optional(),
});

export type FunctionTool = z.infer<typeof functionTool>;

/** `text.format`: plain text, or a JSON schema the run's final answer must match (Agentry's structured output). */
const textConfig = z.strictObject({
  format: z
    .discriminatedUnion("type", [
      z.strictObject({ type: z.literal("text") }),
      z.strictObject({
        type: z.literal("json_schema"),
        name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, "must match ^[a-zA-Z0-9_-]{1,64}$"),
        schema: objectJsonSchema,
        description: z.string().optional(),
        strict: z.literal(true, "Agentry always checks the answer against the schema").nullable().optional(),
      }),
    ])
    .optional(),
});

/**
 * The fields of `POST /v1/responses` that Agentry serves (docs/responses-api.md). Any other
 * field is refused by name: an OpenAI field that Agentry would ignore never passes silently.
 */
export const createResponseBody = z
  .strictObject({
    model: z.string().regex(CLIENT_ID, "must be an Agentry agent id"),
    input: z.union([z.string().min(1), z.array(inputItem).min(1)]),
    instructions: z.string().nullable().optional(),
    previous_response_id: z.string().nullable().optional(),
    conversation: z.union([z.string(), z.strictObject({ id: z.string() })]).nullable().optional(),
    text: textConfig.optional(),
    tools: z.array(functionTool).max(128).optional(),
    metadata: z
      .record(z.string().max(64), z.string().max(512))
      .refine((m) => Object.keys(m).length <= 16, "at most 16 keys")
      .nullable()
      .optional(),
    store: z.literal(true, "Agentry always stores a response (its run); delete it with DELETE /v1/responses/{id}").nullable().optional(),
    stream: z.boolean().nullable().optional(),
    background: z.boolean().nullable().optional(),
  })
  .openapi("CreateResponse");

export type CreateResponseBody = z.infer<typeof createResponseBody>;

/** The content parts of a message's content, in Agentry's form. */
function partsOf(content: string | z.infer<typeof inputContent>[]): ContentPart[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return content.map((part): ContentPart => {
    if (part.type === "input_text") return { type: "text", text: part.text };
    if (part.type === "input_file") {
      const [, mediaType, data] = DATA_URL.exec(part.file_data) as RegExpExecArray;
      return { type: "file", media_type: mediaType as FileType, data: data as string, name: part.filename };
    }
    const match = DATA_URL.exec(part.image_url);
    if (!match) return { type: "image", url: part.image_url };
    return { type: "image", media_type: match[1] as ImageType, data: match[2] as string };
  });
}

/** The user messages of a request's input as one turn's content: a string stays a string. */
export function turnInput(input: CreateResponseBody["input"]): string | ContentPart[] {
  if (typeof input === "string") return input;
  return input.flatMap((item) => (item.type === "function_call_output" ? [] : partsOf(item.content)));
}
