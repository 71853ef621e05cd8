import { z } from "zod";
import { CLIENT_ID } from "../core/ids";

/** The queue message of a background run: enough to find its session's object. */
export const runMessageSchema = z.strictObject({
  tenant: z.string().regex(CLIENT_ID),
  session_id: z.string().regex(CLIENT_ID),
  run_id: z.string().regex(CLIENT_ID),
});

export type RunMessage = z.infer<typeof runMessageSchema>;
