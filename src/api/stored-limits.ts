import { MAX_STEP_OUTPUT_BYTES, MAX_TOOL_OUTPUT_BYTES, storedBytes } from "../tools/outcome";
import { ApiError, type FieldError } from "./errors";

/** Bytes (UTF-8 JSON, as stored) a run's `metadata` may take: it is kept in the run's record. */
export const MAX_RUN_METADATA_BYTES = 64_000;

const utf8Bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).byteLength;

/**
 * Bytes (UTF-8 JSON, as stored) a run's record may reach: its agent snapshot, input text,
 * `output_schema` and `metadata` (written once), and the largest answer its agent lets a model
 * call write (`max_output_tokens`, at ANSWER_BYTES_PER_TOKEN). D1 and Durable Object SQLite refuse
 * a row over 2 MB; the rest is left to what else a run adds (checkpoints, metrics, required actions).
 */
export const MAX_RUN_RECORD_BYTES = 1_800_000;
/** Bytes an answer takes per output token, at most in practice (English averages 4 characters a token). */
export const ANSWER_BYTES_PER_TOKEN = 4;

/** What a new run stores once (its agent, input text, output schema and metadata). */
export type RunRecordParts = {
  agent: { max_output_tokens: number };
  input: readonly { type: string; text?: string }[];
  output_schema: unknown;
  metadata: unknown;
  /** What the API surface keeps with the run (`/v1/responses`: surface.ts). */
  surface?: unknown;
};

/**
 * Refuses, before anything is stored, a run whose record could not fit in one row
 * (`413 payload_too_large` naming `input`, the one field of the request that a client can shrink
 * for this agent): a 1,000,000-character input is 1 MB of ASCII but up to 4 MB of UTF-8.
 */
export function assertRunRecordFits(parts: RunRecordParts): void {
  const text = parts.input.flatMap((p) => (p.type === "text" && p.text !== undefined ? [p.text] : []));
  const sizes = {
    agent: utf8Bytes(parts.agent),
    input: utf8Bytes(text),
    output_schema: utf8Bytes(parts.output_schema ?? null),
    metadata: utf8Bytes(parts.metadata ?? {}),
    surface: parts.surface === undefined ? 0 : utf8Bytes(parts.surface),
    answer: parts.agent.max_output_tokens * ANSWER_BYTES_PER_TOKEN,
  };
  const total = sizes.agent + sizes.input + sizes.output_schema + sizes.metadata + sizes.surface + sizes.answer;
  if (total <= MAX_RUN_RECORD_BYTES) return;
  const message =
    `The run could store ${total} bytes (agent ${sizes.agent}, input text ${sizes.input}, output_schema ${sizes.output_schema}, ` +
    `metadata ${sizes.metadata}, the request's own fields ${sizes.surface}, an answer of max_output_tokens ${parts.agent.max_output_tokens} × ${ANSWER_BYTES_PER_TOKEN}), ` +
    `over the limit of ${MAX_RUN_RECORD_BYTES}`;
  throw new ApiError("payload_too_large", message, { fields: [{ path: "input", message }] });
}

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
      fields.push({
        path: `tool_results.${index}.output`,
        message: `is ${bytes} bytes as stored, over the limit of ${MAX_TOOL_OUTPUT_BYTES}`,
      });
    }
  }
  if (total > MAX_STEP_OUTPUT_BYTES && fields.every((f) => !f.path.startsWith("tool_results"))) {
    fields.push({ path: "tool_results", message: `the outputs are ${total} bytes together, over the limit of ${MAX_STEP_OUTPUT_BYTES}` });
  }
  if (fields.length > 0) {
    throw new ApiError("payload_too_large", fields.map((f) => `${f.path} ${f.message}`).join("; "), { fields });
  }
}
