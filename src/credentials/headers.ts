import { z } from "zod";

/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$/;

/** Visible ASCII, spaces and tabs: no CR, LF or NUL that could split a request. */
const HEADER_VALUE = /^[\t\x20-\x7e]{1,4096}$/;

/**
 * Names Agentry (or the runtime) sets itself: the framing and hop-by-hop headers, the
 * provider keys (a credential's key goes in `api_key`), and Agentry's own `x-agentry-*`.
 */
const RESERVED = new Set([
  "host",
  "content-length",
  "content-type",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "upgrade",
  "expect",
  "authorization",
  "x-api-key",
]);

/** At most this many extra headers per credential (or in `PROVIDER_HEADERS`). */
export const MAX_EXTRA_HEADERS = 16;

/** Why a header name may not be sent as an extra provider header, or null when it may. */
export function headerNameProblem(name: string): string | null {
  if (!HEADER_NAME.test(name)) return "must be an HTTP header name (letters, digits and !#$%&'*+.^_`|~-)";
  const lower = name.toLowerCase();
  if (RESERVED.has(lower)) return `is set by Agentry and may not be overridden`;
  if (lower.startsWith("x-agentry-")) return "x-agentry-* headers are Agentry's own";
  return null;
}

/** Extra headers for provider calls (a credential's `headers`, the operator's `PROVIDER_HEADERS`). */
export const extraHeadersSchema = z
  .record(
    z.string().superRefine((name, ctx) => {
      const problem = headerNameProblem(name);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    }),
    z.string().regex(HEADER_VALUE, "must be 1 to 4096 visible ASCII characters (no line breaks)"),
  )
  .refine((headers) => Object.keys(headers).length <= MAX_EXTRA_HEADERS, `at most ${MAX_EXTRA_HEADERS} headers`)
  .refine((headers) => {
    const names = Object.keys(headers).map((name) => name.toLowerCase());
    return new Set(names).size === names.length;
  }, "header names must differ in more than case");

/** Validated extra headers. */
export type ExtraHeaders = z.output<typeof extraHeadersSchema>;
