import { anthropicMessageOf, openaiErrorOfCode } from "./errors";
import { randomId } from "./ids";
import { dataFrame, namedFrame, type Frame } from "./sse";
import type { StreamErrorDirective } from "./directives";

/**
 * The error frames that end a stream which already started (`[[stream_error TYPE]]`,
 * `[[error_event TYPE]]`), each as its vendor sends it. The offline model sends one after half
 * of the answer's tokens, on the first attempt only.
 */

/** Anthropic: an `error` event with the error's `type` (`overloaded_error`, `api_error` …). */
export const anthropicStreamError =
  ({ type }: StreamErrorDirective) =>
  (): Frame =>
    namedFrame("error", { type: "error", error: { type, message: anthropicMessageOf(type) }, request_id: randomId("req_") });

/** Chat Completions: a data frame whose top-level `error` carries the code. */
export const chatStreamError =
  ({ type }: StreamErrorDirective) =>
  (): Frame =>
    dataFrame({ error: { ...openaiErrorOfCode(type), param: null, code: type } });

/**
 * Responses: `response.failed` whose `response.error.code` is TYPE (`[[stream_error]]`), or an
 * `error` event with that code (`[[error_event]]`); numbered after the events before it.
 */
export const responsesStreamError =
  ({ type, event }: StreamErrorDirective, response: object) =>
  (sequence_number: number): Frame => {
    const { message } = openaiErrorOfCode(type);
    if (event) return namedFrame("error", { type: "error", code: type, message, param: null, sequence_number });
    const failed = { ...response, status: "failed", completed_at: null, error: { code: type, message }, output: [], usage: null };
    return namedFrame("response.failed", { type: "response.failed", sequence_number, response: failed });
  };
