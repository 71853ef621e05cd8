import { z } from "zod";

/**
 * A JSON Schema whose root `type` is `"object"` (tool parameters, output schemas). Only the
 * root is checked, plus the shape of `properties` and `required`; other keywords pass through.
 */
export const objectJsonSchema = z.looseObject({
  type: z.literal("object", { error: 'the root "type" must be "object"' }),
  properties: z.record(z.string(), z.union([z.record(z.string(), z.unknown()), z.boolean()])).optional(),
  required: z.array(z.string()).optional(),
});

/** A JSON Schema object as stored: `type: "object"` and any other keywords. */
export type ObjectJsonSchema = z.output<typeof objectJsonSchema>;

/** The parameters of a tool that declares none. */
export const noParameters = (): ObjectJsonSchema => ({ type: "object", properties: {} });
