import { MAX_STEP_OUTPUT_BYTES, MAX_TOOL_OUTPUT_BYTES, storedBytes } from "../tools/outcome";
import { ApiError, type FieldError } from "./errors";

/** Bytes (UTF-8 JSON, as stored) a run's `metadata` may take: it is kept in the run's record. */
export const MAX_RUN_METADATA_BYTES = 64_000;

const utf8Bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).byteLength;

/**
 * Fields a run request stores that are over their limits (docs/runs.md, Limits): `413
 * payload_too_large` naming each in `details.fields`. Nesting depth was checked before parsing
 * (json-depth-guard.ts), so the values serialise safely here.
 */
export function assertStorable(body: { metadata?: Record<string, unknown>; tool_results?: { output: string }[] }): void {
  const fields: FieldError[] = [];
  const metadataBytes = body.metadata === undefined ? 0 : utf8Bytes(body.metadata);
  if (metadataBytes > MAX_RUN_METADATA_BYTES) {
    fields.push({ path: "metadata", message: `is ${metadataBytes} bytes, over the limit of ${MAX_RUN_METADATA_BYTES}` });
  }
  let total = 0;
  for (const [index, result] of (body.tool_results ?? []).entries()) {
    const bytes = storedBytes(result.output);
    total += bytes;
    if (bytes > MAX_TOOL_OUTPUT_BYTES) {
      fields.push({ path: `tool_results.${index}.output`, message: `is ${bytes} bytes as stored, over the limit of ${MAX_TOOL_OUTPUT_BYTES}` });
    }
  }
  if (total > MAX_STEP_OUTPUT_BYTES && fields.every((f) => !f.path.startsWith("tool_results"))) {
    fields.push({ path: "tool_results", message: `the outputs are ${total} bytes together, over the limit of ${MAX_STEP_OUTPUT_BYTES}` });
  }
  if (fields.length > 0) {
    throw new ApiError("payload_too_large", fields.map((f) => `${f.path} ${f.message}`).join("; "), { fields });
  }
}
