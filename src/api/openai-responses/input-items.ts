import { z } from "@hono/zod-openapi";
import { FILE_TYPES, IMAGE_TYPES } from "../../media/limits";

/** `data:<media type>;base64,<data>`, the only inline form OpenAI's `image_url` and `file_data` take. */
export const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

const dataUrlOf = (types: readonly string[]) =>
  z.string().refine(
    (url) => {
      const match = DATA_URL.exec(url);
      return match !== null && types.includes(match[1] as string);
    },
    `must be a base64 data URL of type ${types.join(", ")}`,
  );

const noFilesApi = "Agentry has no Files API: send the bytes inline (image_url / file_data as a base64 data URL)";

const inputText = z.looseObject({ type: z.literal("input_text"), text: z.string() });

const inputImage = z
  .looseObject({
    type: z.literal("input_image"),
    image_url: z
      .union([
        dataUrlOf(IMAGE_TYPES).openapi({ description: "A base64 data URL of a PNG, JPEG, GIF or WebP image", pattern: "^data:" }),
        z
          .string()
          .startsWith("https://", "must be an https URL or a base64 data URL")
          .openapi({ description: "An https URL", format: "uri" }),
      ])
      .optional(),
    file_id: z.null({ error: noFilesApi }).optional(),
    // Agentry sends an image as it is, at the resolution the provider gives it: every detail is served that way.
    detail: z.enum(["auto", "low", "high", "original"]).nullable().optional(),
  })
  .refine((part) => typeof part.image_url === "string", {
    path: ["image_url"],
    message: "required (Agentry has no Files API for file_id)",
  });

const inputFile = z
  .looseObject({
    type: z.literal("input_file"),
    file_data: dataUrlOf(FILE_TYPES).optional(),
    filename: z.string().min(1).max(255).optional(),
    file_id: z.null({ error: noFilesApi }).optional(),
    file_url: z.null({ error: "file URLs are not fetched: send file_data as a base64 data URL" }).optional(),
  })
  .refine((part) => typeof part.file_data === "string", {
    path: ["file_data"],
    message: "required (Agentry has no Files API for file_id)",
  });

/** The parts of a user, system or developer message. */
export const inputContent = z.discriminatedUnion("type", [inputText, inputImage, inputFile]);
export type InputContent = z.infer<typeof inputContent>;

/** The parts of an assistant message brought back: its text and refusals. */
const outputText = z.looseObject({ type: z.literal("output_text"), text: z.string() });
const refusal = z.looseObject({ type: z.literal("refusal"), refusal: z.string() });

/** Any message's parts, in one union so that an error names the field inside the part (which role takes which: conversation.ts). */
const messageContent = z.discriminatedUnion("type", [inputText, inputImage, inputFile, outputText, refusal]);

const messageStatus = z.enum(["in_progress", "completed", "incomplete"]).nullable().optional();

/**
 * A message of any role: user turns, system / developer instructions, and earlier assistant
 * answers (their `output_text` and `refusal` parts). Which parts a role may carry is checked
 * when the conversation is read (conversation.ts).
 */
const message = z.looseObject({
  type: z.literal("message"),
  role: z.enum(["user", "system", "developer", "assistant"]),
  id: z.string().nullable().optional(),
  content: z.union([z.string(), z.array(messageContent)]),
  status: messageStatus,
});

/** A function call the model made in an earlier turn (an output item brought back). */
const functionCall = z.looseObject({
  type: z.literal("function_call"),
  call_id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
  id: z.string().nullable().optional(),
  status: messageStatus,
});

/** A function tool's result: `output` text, or content parts (their text is the result). */
const functionCallOutput = z.looseObject({
  type: z.literal("function_call_output"),
  call_id: z.string().min(1),
  output: z.union([z.string(), z.array(inputContent)]),
  id: z.string().nullable().optional(),
  status: messageStatus,
});

/** A reasoning item brought back: its summary is kept as the step's reasoning text. */
const reasoning = z.looseObject({
  type: z.literal("reasoning"),
  id: z.string().nullable().optional(),
  summary: z.array(z.looseObject({ type: z.string(), text: z.string() })).default([]),
  content: z
    .array(z.looseObject({ type: z.string(), text: z.string() }))
    .nullable()
    .optional(),
  encrypted_content: z.string().nullable().optional(),
  status: messageStatus,
});

/** A reference to an item of an earlier response by its id. */
const itemReference = z.looseObject({ type: z.literal("item_reference"), id: z.string().min(1) });

const ITEM_TYPES = ["message", "function_call", "function_call_output", "reasoning", "item_reference"];

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * One input item. An item without `type` is a message (OpenAI's `EasyInputMessage`); an item of
 * a type Agentry cannot serve (the calls of OpenAI's hosted tools) is refused with the reason.
 */
export const inputItem = z.preprocess(
  (item) => (isRecord(item) && !("type" in item) ? { ...item, type: "message" } : item),
  z.discriminatedUnion("type", [message, functionCall, functionCallOutput, reasoning, itemReference], {
    error: (issue) => {
      const type = isRecord(issue.input) ? issue.input.type : undefined;
      return typeof type === "string"
        ? `${type} items are not served: Agentry runs no OpenAI hosted tools (supported: ${ITEM_TYPES.join(", ")})`
        : `must be an input item (${ITEM_TYPES.join(", ")})`;
    },
  }),
);

export type InputItem = z.infer<typeof inputItem>;
export type MessageItem = Extract<InputItem, { type: "message" }>;
export type FunctionCallItem = Extract<InputItem, { type: "function_call" }>;
export type FunctionCallOutput = Extract<InputItem, { type: "function_call_output" }>;
