import { schemaProblem, type ObjectJsonSchema } from "../agents";
import { invalidFields } from "./errors";

/**
 * A run's own schema is stored in its run record (one D1 row, with the agent and the input),
 * so it is kept well below an agent definition's 1 MB.
 */
export const MAX_RUN_SCHEMA_BYTES = 256_000;

/**
 * A run's own `output_schema`, checked as an agent's is: its shape (root `type: "object"`) by
 * the body schema, then what the validator could not apply, then its size. Null: the agent's.
 */
export function runOutputSchema(schema: ObjectJsonSchema | null | undefined): ObjectJsonSchema | null {
  if (!schema) return null;
  const problem = schemaProblem(schema);
  if (problem) throw invalidFields([{ path: "output_schema", message: problem }], `output_schema: ${problem}`);
  const bytes = new TextEncoder().encode(JSON.stringify(schema)).byteLength;
  if (bytes > MAX_RUN_SCHEMA_BYTES) {
    const message = `the schema is ${bytes} bytes, over ${MAX_RUN_SCHEMA_BYTES}`;
    throw invalidFields([{ path: "output_schema", message }], `output_schema: ${message}`);
  }
  return schema;
}
