import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { handleMockModel } from "../src/mock-model/index";
import { createProvider } from "../src/providers/index";
import { classifyError, isAbortError, ModelCallAbortedError, streamCutError } from "../src/providers/errors";
import { parseRetryAfterMs } from "../src/providers/retry-after";
import { inProcessFetch } from "../src/providers/sdk-config";
import { ProviderError, type ErrorType } from "../src/providers/types";

const KEY = "sk-ant-classify-secret-0123456789";
const fetch = inProcessFetch(handleMockModel);
const anthropic = new Anthropic({ apiKey: KEY, baseURL: "http://mock.local", fetch, maxRetries: 0 });
const openai = new OpenAI({ apiKey: KEY, baseURL: "http://mock.local/v1", fetch, maxRetries: 0 });

type Api = "anthropic" | "responses" | "chat";

/** Calls the offline model through the real SDK and returns what the SDK throws. */
async function thrownBy(api: Api, text: string): Promise<unknown> {
  try {
    if (api === "anthropic") {
      const stream = await anthropic.messages.create({
        model: "mock-1",
        max_tokens: 64,
        messages: [{ role: "user", content: text }],
        stream: true,
      });
      for await (const _ of stream);
    } else if (api === "responses") {
      const stream = await openai.responses.create({ model: "mock-1", input: text, stream: true });
      for await (const _ of stream);
    } else {
      const stream = await openai.chat.completions.create({ model: "mock-1", messages: [{ role: "user", content: text }], stream: true });
      for await (const _ of stream);
    }
  } catch (error) {
    return error;
  }
  throw new Error(`${api}: "${text}" did not fail`);
}

type Expected = { type: ErrorType; retryable: boolean; status?: number | null; retryAfterMs?: number | null };

const ROWS: [directive: string, expected: Expected][] = [
  ["[[fail 529 x1]]", { type: "overloaded", retryable: true, status: 529, retryAfterMs: null }],
  ["[[fail 429 x1 retry-after=2]]", { type: "rate_limited", retryable: true, status: 429, retryAfterMs: 2000 }],
  ["[[fail 429 x1]]", { type: "rate_limited", retryable: true, status: 429, retryAfterMs: null }],
  ["[[fail 408 x1]]", { type: "provider_error", retryable: true, status: 408 }],
  ["[[fail 500 x1]]", { type: "provider_error", retryable: true, status: 500 }],
  ["[[fail 502 x1]]", { type: "provider_error", retryable: true, status: 502 }],
  ["[[fail 503 x1 retry-after=1]]", { type: "provider_error", retryable: true, status: 503, retryAfterMs: 1000 }],
  ["[[fail 504 x1]]", { type: "provider_error", retryable: true, status: 504 }],
  ["[[quota]]", { type: "quota_exceeded", retryable: false }],
  ["[[context_overflow]]", { type: "context_window_exceeded", retryable: false, status: 400 }],
  ["[[fail 400 x1]]", { type: "provider_error", retryable: false, status: 400 }],
  ["[[fail 401 x1]]", { type: "auth_error", retryable: false, status: 401 }],
  ["[[fail 402 x1]]", { type: "quota_exceeded", retryable: false, status: 402 }],
  ["[[fail 403 x1]]", { type: "auth_error", retryable: false, status: 403 }],
  ["[[fail 404 x1]]", { type: "provider_error", retryable: false, status: 404 }],
  ["[[fail 413 x1]]", { type: "provider_error", retryable: false, status: 413 }],
  ["[[fail 422 x1]]", { type: "provider_error", retryable: false, status: 422 }],
];

describe.each<Api>(["anthropic", "responses", "chat"])("errors the %s SDK throws for the offline model", (api) => {
  it.each(ROWS)("%s", async (directive, expected) => {
    const classified = classifyError(await thrownBy(api, `${directive} hi`), { secrets: [KEY] });
    expect(classified).toBeInstanceOf(ProviderError);
    expect(classified).toMatchObject(expected);
    expect(classified.message.length).toBeLessThanOrEqual(240);
    expect(classified.message).not.toContain(KEY);
    expect(classified.message).not.toMatch(/sk-/);
  });
});

/** A real body per vendor, through the adapter (the real SDK parsing it, then the adapter's classification). */
type VendorRow = [directive: string, expected: Partial<Record<Api, Expected>>];

const PERMANENT_CONTEXT: Expected = { type: "context_window_exceeded", retryable: false, status: 400 };
const VENDOR_ROWS: VendorRow[] = [
  // Anthropic: "input length and `max_tokens` exceed context limit: …"; Chat: "… you requested … in the completion".
  ["[[context_limit]]", { anthropic: PERMANENT_CONTEXT, responses: PERMANENT_CONTEXT, chat: PERMANENT_CONTEXT }],
  // Anthropic: 400 "You have reached your specified API usage limits…"; OpenAI: 429 insufficient_quota.
  [
    "[[usage_limits]]",
    {
      anthropic: { type: "quota_exceeded", retryable: false, status: 400 },
      responses: { type: "quota_exceeded", retryable: false, status: 429 },
      chat: { type: "quota_exceeded", retryable: false, status: 429 },
    },
  ],
  // OpenAI: 429 "Request too large for … on tokens per min (TPM)" can never succeed; Anthropic's
  // input-tokens-per-minute 429 does not say so, and stays a retryable rate limit.
  [
    "[[tpm_limit]]",
    {
      anthropic: { type: "rate_limited", retryable: true, status: 429 },
      responses: { type: "rate_limited", retryable: false, status: 429 },
      chat: { type: "rate_limited", retryable: false, status: 429 },
    },
  ],
  ...(["anthropic", "responses", "chat"] as const).flatMap((api): VendorRow[] => [
    ["[[fail 500 x1 should-retry=false]]", { [api]: { type: "provider_error", retryable: false, status: 500 } }],
    ["[[fail 429 x1 should-retry=false]]", { [api]: { type: "rate_limited", retryable: false, status: 429 } }],
    ["[[fail 400 x1 should-retry=true]]", { [api]: { type: "provider_error", retryable: true, status: 400 } }],
    ["[[fail 529 x1 should-retry=true]]", { [api]: { type: "overloaded", retryable: true, status: 529 } }],
  ]),
  // Errors inside a stream that already started: no status, classified by their type or code.
  ["[[stream_error overloaded_error]]", { anthropic: { type: "overloaded", retryable: true, status: null } }],
  ["[[stream_error api_error]]", { anthropic: { type: "provider_error", retryable: true, status: null } }],
  ["[[stream_error rate_limit_error]]", { anthropic: { type: "rate_limited", retryable: true, status: null } }],
  ["[[stream_error invalid_request_error]]", { anthropic: { type: "provider_error", retryable: false, status: null } }],
  [
    "[[stream_error server_error]]",
    {
      responses: { type: "provider_error", retryable: true, status: null },
      chat: { type: "provider_error", retryable: true, status: null },
    },
  ],
  [
    "[[stream_error rate_limit_exceeded]]",
    {
      responses: { type: "rate_limited", retryable: true, status: null },
      chat: { type: "rate_limited", retryable: true, status: null },
    },
  ],
  ["[[stream_error insufficient_quota]]", { responses: { type: "quota_exceeded", retryable: false, status: null } }],
  ["[[stream_error context_length_exceeded]]", { responses: { type: "context_window_exceeded", retryable: false, status: null } }],
  ["[[stream_error invalid_prompt]]", { responses: { type: "provider_error", retryable: false, status: null } }],
  ["[[error_event server_error]]", { responses: { type: "provider_error", retryable: true, status: null } }],
  ["[[error_event rate_limit_exceeded]]", { responses: { type: "rate_limited", retryable: true, status: null } }],
];

const ADAPTER: Record<Api, "anthropic" | "openai" | "openai-chat"> = { anthropic: "anthropic", responses: "openai", chat: "openai-chat" };

/** Calls the offline model through an adapter (`mock:`) and returns what it throws. */
async function thrownByAdapter(api: Api, text: string): Promise<unknown> {
  const provider = createProvider({ provider: ADAPTER[api], base_url: "mock:" }, {});
  const streamed: string[] = [];
  const request = {
    model: "mock-1",
    messages: [{ role: "user" as const, content: [{ type: "text" as const, text }] }],
    tools: [],
    max_output_tokens: 64,
    attempt: 1,
  };
  const error = await provider.call(request, { onEvent: (event) => streamed.push(event.type) }).then(
    () => null,
    (e: unknown) => e,
  );
  if (error === null) throw new Error(`${api}: "${text}" did not fail`);
  return { error, streamed };
}

describe.each(VENDOR_ROWS)("the vendors' own errors: %s", (directive, expectations) => {
  it.each(Object.entries(expectations) as [Api, Expected][])("%s", async (api, expected) => {
    const { error, streamed } = (await thrownByAdapter(api, `${directive} one two three four`)) as { error: unknown; streamed: string[] };
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject(expected);
    // A stream error comes after the first tokens of the answer; an HTTP error before any.
    expect(streamed.length > 0).toBe(directive.includes("stream_error") || directive.includes("error_event"));
  });
});

const headers = (values: Record<string, string> = {}) => new Headers(values);
const anthropicBody = (type: string, message: string, details?: Record<string, unknown>) => ({
  type: "error",
  error: { type, message, ...(details ? { details } : {}) },
});

describe("errors the offline model cannot produce", () => {
  it.each([
    ["anthropic connection error", new Anthropic.APIConnectionError({ message: "fetch failed" })],
    ["openai connection error", new OpenAI.APIConnectionError({ message: "fetch failed" })],
    ["anthropic connection timeout", new Anthropic.APIConnectionTimeoutError()],
    ["openai connection timeout", new OpenAI.APIConnectionTimeoutError()],
  ])("%s is retryable", (_, error) => {
    expect(classifyError(error)).toMatchObject({ type: "provider_error", retryable: true, status: null });
  });

  it.each([
    ["anthropic", new Anthropic.APIUserAbortError()],
    ["openai", new OpenAI.APIUserAbortError()],
    ["platform", new DOMException("The operation was aborted.", "AbortError")],
    ["adapter", new ModelCallAbortedError()],
  ])("a %s abort is recognised and never retried", (_, error) => {
    expect(isAbortError(error)).toBe(true);
    const classified = classifyError(error);
    expect(classified).toBeInstanceOf(ModelCallAbortedError);
    expect(classified).toMatchObject({ type: "internal", retryable: false });
  });

  it("an Anthropic spend limit is quota even with status 429", () => {
    const body = anthropicBody("rate_limit_error", "Spend limit reached.", { error_code: "enforced_spend_limit_reached" });
    const error = Anthropic.APIError.generate(429, body, undefined, headers({ "retry-after": "30" }));
    expect(classifyError(error)).toMatchObject({ type: "quota_exceeded", retryable: false, status: 429 });
  });

  it("an Anthropic billing_error is quota", () => {
    const error = Anthropic.APIError.generate(400, anthropicBody("billing_error", "Billing."), undefined, headers());
    expect(classifyError(error)).toMatchObject({ type: "quota_exceeded", retryable: false });
  });

  it("reads retry-after-ms before retry-after", () => {
    const error = Anthropic.APIError.generate(
      429,
      anthropicBody("rate_limit_error", "Rate limited."),
      undefined,
      headers({ "retry-after-ms": "1500", "retry-after": "9" }),
    );
    expect(classifyError(error).retryAfterMs).toBe(1500);
  });

  it("keeps unlisted statuses apart: other 5xx retryable, 501 and other 4xx permanent", () => {
    const make = (status: number) => OpenAI.APIError.generate(status, { error: { message: "x" } }, undefined, headers());
    expect(classifyError(make(520))).toMatchObject({ type: "provider_error", retryable: true, status: 520 });
    expect(classifyError(make(501))).toMatchObject({ type: "provider_error", retryable: false, status: 501 });
    expect(classifyError(make(409))).toMatchObject({ type: "provider_error", retryable: false, status: 409 });
  });

  it("passes a ProviderError through and calls anything else internal", () => {
    const cut = streamCutError();
    expect(classifyError(cut)).toBe(cut);
    expect(cut).toMatchObject({ type: "provider_error", retryable: true });
    expect(classifyError(new TypeError("x is undefined"))).toMatchObject({ type: "internal", retryable: false });
  });

  it("removes secrets and key-shaped text and keeps messages short", () => {
    const message = `bad key sk-live-abcdef123456 and my-secret-value ${"long ".repeat(100)}`;
    const error = OpenAI.APIError.generate(400, { error: { message } }, undefined, headers());
    const classified = classifyError(error, { secrets: ["my-secret-value"] });
    expect(classified.message).not.toContain("sk-live");
    expect(classified.message).not.toContain("my-secret-value");
    expect(classified.message.length).toBeLessThanOrEqual(220);
  });
});

describe("parseRetryAfterMs", () => {
  const now = Date.parse("2026-12-02T10:00:00Z");
  it.each([
    [{ "retry-after": "2" }, 2000],
    [{ "retry-after": "0.5" }, 500],
    [{ "retry-after-ms": "250" }, 250],
    [{ "retry-after": "Wed, 02 Dec 2026 10:00:03 GMT" }, 3000],
    [{ "retry-after": "Wed, 02 Dec 2026 09:59:00 GMT" }, 0],
    [{ "retry-after": "soon" }, null],
    [{}, null],
  ])("%o → %s", (values, expected) => {
    expect(parseRetryAfterMs(headers(values), now)).toBe(expected);
  });
});
