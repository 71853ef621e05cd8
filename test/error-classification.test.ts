import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { handleMockModel } from "../src/mock-model/index";
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
      const stream = await anthropic.messages.create({ model: "mock-1", max_tokens: 64, messages: [{ role: "user", content: text }], stream: true });
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

type Expected = { type: ErrorType; retryable: boolean; status?: number; retryAfterMs?: number | null };

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

  it("an overloaded_error event in an Anthropic stream is overloaded", () => {
    const error = new Anthropic.APIError(undefined, anthropicBody("overloaded_error", "Overloaded"), undefined, headers());
    expect(classifyError(error)).toMatchObject({ type: "overloaded", retryable: true, status: null });
  });

  it("an api_error event in an Anthropic stream is retryable", () => {
    const error = new Anthropic.APIError(undefined, anthropicBody("api_error", "Internal server error"), undefined, headers());
    expect(classifyError(error)).toMatchObject({ type: "provider_error", retryable: true });
  });

  it("a server_error frame in an OpenAI stream is retryable", () => {
    const error = new OpenAI.APIError(undefined, { type: "server_error", code: "server_error", message: "oops" }, undefined, headers());
    expect(classifyError(error)).toMatchObject({ type: "provider_error", retryable: true });
  });

  it("a failed Responses answer keeps its code", () => {
    const error = new OpenAI.APIError(undefined, { code: "rate_limit_exceeded", message: "slow down" }, "response failed", undefined);
    expect(classifyError(error)).toMatchObject({ type: "rate_limited", retryable: true });
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
