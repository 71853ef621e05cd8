import * as Anthropic from "@anthropic-ai/sdk/core/error";
import * as OpenAI from "openai/core/error";
import { parseRetryAfterMs } from "./retry-after";
import { ProviderError, type ErrorType } from "./types";

/** Thrown by an adapter when its call was aborted through `signal` (a cancel). Never retried. */
export class ModelCallAbortedError extends ProviderError {
  constructor() {
    super("internal", "model call aborted", false);
    this.name = "ModelCallAbortedError";
  }
}

/** True for an aborted model call: ours, the SDKs' `APIUserAbortError`, or a platform `AbortError`. */
export function isAbortError(error: unknown): boolean {
  return (
    error instanceof ModelCallAbortedError ||
    error instanceof Anthropic.APIUserAbortError ||
    error instanceof OpenAI.APIUserAbortError ||
    (error instanceof Error && error.name === "AbortError") ||
    (typeof DOMException !== "undefined" && error instanceof DOMException && error.name === "AbortError")
  );
}

/** The retryable error an adapter throws when a stream ends before its final event. */
export function streamCutError(): ProviderError {
  return new ProviderError("provider_error", "stream ended before the answer was complete", true);
}

/** The error of a call on a real provider whose key is not configured. Names the secret, never a value. */
export function missingKeyError(secret: string): ProviderError {
  return new ProviderError("auth_error", `${secret} is not configured`, false);
}

type Row = { type: ErrorType; retryable: boolean; label: string };

const row = (type: ErrorType, retryable: boolean, label: string): Row => ({ type, retryable, label });

/**
 * The one classification table, by HTTP status (docs/api.md, Retries). Rows that depend on the
 * body (quota, context window, overloaded) are checked before it in `classifyError`.
 */
const STATUS_TABLE: ReadonlyMap<number, Row> = new Map([
  [400, row("provider_error", false, "bad request")],
  [401, row("auth_error", false, "authentication failed")],
  [402, row("quota_exceeded", false, "quota or credit exhausted")],
  [403, row("auth_error", false, "permission denied")],
  [404, row("provider_error", false, "not found")],
  [408, row("provider_error", true, "request timeout")],
  [413, row("provider_error", false, "request too large")],
  [422, row("provider_error", false, "unprocessable request")],
  [429, row("rate_limited", true, "rate limited")],
  [500, row("provider_error", true, "provider error")],
  [502, row("provider_error", true, "bad gateway")],
  [503, row("provider_error", true, "service unavailable")],
  [504, row("provider_error", true, "gateway timeout")],
  [529, row("overloaded", true, "overloaded")],
]);

const QUOTA = row("quota_exceeded", false, "quota or credit exhausted");
const CONTEXT = row("context_window_exceeded", false, "context window exceeded");
const OVERLOADED = row("overloaded", true, "overloaded");
/** One request larger than the per-minute token limit: a rate limit that waiting never lifts. */
const OVER_RATE_LIMIT = row("rate_limited", false, "request larger than the rate limit");

/**
 * Body error types (Anthropic `error.type`, OpenAI `error.type` / `code`) of errors that
 * carry no status, as in a mid-stream `error` event.
 */
const BODY_TYPE_TABLE: ReadonlyMap<string, Row> = new Map([
  ["invalid_request_error", row("provider_error", false, "bad request")],
  ["authentication_error", row("auth_error", false, "authentication failed")],
  ["permission_error", row("auth_error", false, "permission denied")],
  ["not_found_error", row("provider_error", false, "not found")],
  ["request_too_large", row("provider_error", false, "request too large")],
  ["rate_limit_error", row("rate_limited", true, "rate limited")],
  ["rate_limit_exceeded", row("rate_limited", true, "rate limited")],
  ["timeout_error", row("provider_error", true, "provider timeout")],
  ["api_error", row("provider_error", true, "provider error")],
  ["server_error", row("provider_error", true, "provider error")],
  ["internal_error", row("provider_error", true, "provider error")],
]);

const QUOTA_CODES = new Set([
  "billing_error",
  "insufficient_quota",
  "billing_not_active",
  "billing_hard_limit_reached",
  "enforced_spend_limit_reached",
  "contract_spend_limit_reached",
  "linked_organization_spend_limit_reached",
  "linked_organization_billing_unavailable",
]);
// Not "billing": OpenAI rate-limit messages link to the billing page. "usage limits": Anthropic's
// 400 once a workspace's own spend limit is reached ("You have reached your specified API usage limits").
const QUOTA_TEXT = /credit balance|insufficient.?quota|exceeded your current quota|spend(ing)? limit|specified API usage limits/i;
const CONTEXT_CODES = new Set(["context_length_exceeded", "context_window_exceeded"]);
// "exceed context limit": Anthropic's "input length and `max_tokens` exceed context limit: …".
const CONTEXT_TEXT = /prompt is too long|context.?(window|length)|maximum context|exceed context limit/i;
// OpenAI's 429 "Request too large for gpt-4o in organization … on tokens per min (TPM): Limit …, Requested …".
const OVER_RATE_LIMIT_TEXT = /request too large for .+ on tokens per (min|day)/i;

type Details = { status: number | null; kinds: string[]; message: string; headers: Headers | undefined };

/**
 * Classifies anything a model call threw into a `ProviderError`: retryable or permanent,
 * its type, status and the provider's wait hint. Messages are short, carry no request body,
 * and have `secrets` (the keys in use) and anything shaped like a key removed.
 */
export function classifyError(error: unknown, options: { secrets?: readonly string[] } = {}): ProviderError {
  if (error instanceof ProviderError) return error;
  if (isAbortError(error)) return new ModelCallAbortedError();
  if (error instanceof Anthropic.APIConnectionTimeoutError || error instanceof OpenAI.APIConnectionTimeoutError) {
    return new ProviderError("provider_error", "connection timed out", true);
  }
  if (error instanceof Anthropic.APIConnectionError || error instanceof OpenAI.APIConnectionError) {
    return new ProviderError("provider_error", "connection error", true);
  }
  if (!(error instanceof Anthropic.APIError || error instanceof OpenAI.APIError)) {
    return new ProviderError("internal", "unexpected error in the model call", false);
  }
  const details = readDetails(error);
  const chosen = withShouldRetry(chooseRow(details), details.headers);
  const text = chosen.type === "auth_error" ? "" : scrub(details.message, options.secrets ?? []);
  const prefix = details.status === null ? chosen.label : `${details.status} ${chosen.label}`;
  return new ProviderError(
    chosen.type,
    text ? `${prefix}: ${text}` : prefix,
    chosen.retryable,
    details.status,
    parseRetryAfterMs(details.headers),
  );
}

function chooseRow({ status, kinds, message }: Details): Row {
  if (status === 402 || kinds.some((k) => QUOTA_CODES.has(k)) || QUOTA_TEXT.test(message)) return QUOTA;
  if ((status === 400 || status === null) && (kinds.some((k) => CONTEXT_CODES.has(k)) || CONTEXT_TEXT.test(message))) {
    return CONTEXT;
  }
  if ((status === 429 || status === null) && OVER_RATE_LIMIT_TEXT.test(message)) return OVER_RATE_LIMIT;
  if (status === 529 || kinds.includes("overloaded_error")) return OVERLOADED;
  if (status !== null) {
    // Unlisted statuses: other 5xx are transient (520–524 from proxies), 501 / 505 and other 4xx are not.
    const transient = status >= 500 && status !== 501 && status !== 505;
    return STATUS_TABLE.get(status) ?? row("provider_error", transient, "provider error");
  }
  for (const kind of kinds) {
    const found = BODY_TYPE_TABLE.get(kind);
    if (found) return found;
  }
  return row("provider_error", false, "provider error");
}

/**
 * `x-should-retry: true | false` decides retryable, as both SDKs' `shouldRetry` let it win over
 * the status; except that quota and context-window errors stay permanent (docs/api.md, Retries: a
 * context-window error leads to compaction, not to the same request again).
 */
function withShouldRetry(chosen: Row, headers: Headers | undefined): Row {
  const header = headers?.get("x-should-retry");
  if ((header !== "true" && header !== "false") || chosen === QUOTA || chosen === CONTEXT) return chosen;
  return { ...chosen, retryable: header === "true" };
}

/** Status, error types / codes and message of either SDK's `APIError` (Anthropic keeps the whole body, OpenAI its `error`). */
function readDetails(error: Anthropic.APIError | OpenAI.APIError): Details {
  const outer = isRecord(error.error) ? error.error : null;
  const inner = isRecord(outer?.error) ? outer.error : outer;
  const details = inner?.details;
  const detailsCode = isRecord(details) ? details.error_code : undefined;
  const kinds = [inner?.type, inner?.code, detailsCode, error.type].filter((k): k is string => typeof k === "string" && k.length > 0);
  const message = typeof inner?.message === "string" ? inner.message : "";
  return { status: typeof error.status === "number" ? error.status : null, kinds, message, headers: error.headers };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const KEY_SHAPES = /\b(sk-[A-Za-z0-9_*.-]{4,}|Bearer\s+\S+|[A-Za-z0-9_-]{32,})/g;
const MAX_MESSAGE = 200;

function scrub(message: string, secrets: readonly string[]): string {
  let text = message.replace(/\s+/g, " ").trim();
  for (const secret of secrets) {
    if (secret.length >= 4) text = text.split(secret).join("[redacted]");
  }
  text = text.replace(KEY_SHAPES, "[redacted]");
  return text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE - 1)}…` : text;
}
