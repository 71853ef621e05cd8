import * as Anthropic from "@anthropic-ai/sdk/core/error";
import * as OpenAI from "openai/core/error";
import { classifyError, isAbortError, ModelCallAbortedError, streamCutError } from "./errors";
import type { ModelRequest, ProviderError } from "./types";

/** Per-request SDK options every adapter sends: the attempt header and the cancel signal. */
export function requestOptions(request: ModelRequest, signal: AbortSignal | undefined) {
  return { headers: { "x-agentry-attempt": String(request.attempt) }, signal, maxRetries: 0 };
}

/**
 * Re-throws what an SDK stream's iterator throws: the SDKs' own errors (an `error` event in
 * the stream) as they are, and anything else — the body failing mid-stream, a connection
 * drop, a malformed frame — as the retryable "stream ended" error.
 */
export async function* guardStream<T>(stream: AsyncIterable<T>): AsyncGenerator<T> {
  const iterator = stream[Symbol.asyncIterator]();
  try {
    while (true) {
      let next: IteratorResult<T>;
      try {
        next = await iterator.next();
      } catch (error) {
        if (error instanceof Anthropic.APIError || error instanceof OpenAI.APIError || isAbortError(error)) throw error;
        throw streamCutError();
      }
      if (next.done) return;
      yield next.value;
    }
  } finally {
    await iterator.return?.();
  }
}

/** The error a failed call rejects with: the abort when `signal` fired, else the classified error. */
export function callError(error: unknown, signal: AbortSignal | undefined, secrets: readonly string[]): ProviderError {
  if (signal?.aborted || isAbortError(error)) return new ModelCallAbortedError();
  return classifyError(error, { secrets });
}

/** Measures time to first token from the start of a call. */
export function firstTokenClock(): { mark(): void; value(): number | null } {
  const started = Date.now();
  let first: number | null = null;
  return {
    mark: () => {
      first ??= Date.now() - started;
    },
    value: () => first,
  };
}

/** A token count from a wire usage object, 0 when absent or not a number. */
export function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}
