import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ApiError } from "../src/core/errors";
import { parseInput, resolveInput, type MediaContext } from "../src/media";
import { imageSize } from "../src/media/image-size";
import { MAX_CALL_MEDIA_BYTES, MAX_IMAGE_BYTES, MAX_REQUEST_BYTES } from "../src/media/limits";
import { callMedia } from "../src/media/load";
import type { Message } from "../src/core/messages";
import { handleMockModel } from "../src/mock-model/index";
import { api, createAgent } from "./support/http";
import { encryptedPdf, fromBase64, gradientPng, noisePng, pdfOfPages, pngOfSize, TINY_PNG, toBase64 } from "./support/media";
import { PROVIDERS, requestsOf, upstreamBase } from "./support/upstreams";

type Run = { id: string; status: string; session_id: string; output: unknown };
type ErrorBody = { error: { type: string; message: string; details: { fields: { path: string; message: string }[] } } };

const image = (data: string) => ({ type: "image" as const, media_type: "image/png" as const, data });

/** Posts a raw Messages body to the offline model and returns its status and error message. */
async function anthropicAnswer(messages: unknown[]) {
  const response = await handleMockModel(
    new Request("http://mock.local/v1/messages", {
      method: "POST",
      headers: { "x-api-key": "k" },
      body: JSON.stringify({ model: "mock-1", max_tokens: 64, messages }),
    }),
  );
  return { status: response.status, message: (await response.json<{ error?: { message: string } }>()).error?.message };
}

const imageBlock = (data: string) => ({ type: "image", source: { type: "base64", media_type: "image/png", data } });

describe("media within the vendors' limits", () => {
  it("scales images over a limit down with the Images binding before storing them, and sends the scaled images", async () => {
    const bucket = crypto.randomUUID();
    const agent = await createAgent({
      provider: "anthropic",
      model: "claude-test",
      base_url: upstreamBase(env.GATEWAY_URL, bucket, "anthropic"),
    });
    // Over 8000 px on a side; over 2000 px (too large for a request of more than 20 images); over 5 MB as base64.
    const [wide, large, noisy] = await Promise.all([gradientPng(8100, 900), gradientPng(2400, 1200), noisePng(1200, 1200)]);
    expect(noisy.byteLength).toBeGreaterThan(MAX_IMAGE_BYTES);
    const input = [{ type: "text", text: "look" }, ...[wide, large, noisy, fromBase64(TINY_PNG)].map((png) => image(toBase64(png)))];
    const run = await (await api(`/v1/agents/${agent.id}/runs`, { body: { input } })).json<Run & { input: Record<string, unknown>[] }>();
    expect(run.status).toBe("completed");
    expect(run.input).toEqual([
      { type: "text", text: "look" },
      { type: "image", media_type: "image/png", media_id: expect.any(String), size: expect.any(Number), width: 2000, height: 222 },
      { type: "image", media_type: "image/png", media_id: expect.any(String), size: expect.any(Number), width: 2000, height: 1000 },
      // A PNG of noise stays over the limit as PNG: it is stored as WebP.
      { type: "image", media_type: "image/webp", media_id: expect.any(String), size: expect.any(Number), width: 1200, height: 1200 },
      { type: "image", media_type: "image/png", media_id: expect.any(String), size: 70, width: 1, height: 1 },
    ]);
    expect(run.input[3]?.size).toBeLessThanOrEqual(MAX_IMAGE_BYTES);
    const sent = (await requestsOf(env.GATEWAY_URL, bucket))[0]?.body as {
      messages: { content: { type: string; source?: { media_type: "image/png"; data: string } }[] }[];
    };
    const images = sent.messages[0]?.content.flatMap((block) =>
      block.source ? [imageSize(block.source.media_type, fromBase64(block.source.data))] : [],
    );
    expect(images).toEqual([
      { width: 2000, height: 222 },
      { width: 2000, height: 1000 },
      { width: 1200, height: 1200 },
      { width: 1, height: 1 },
    ]);
  });

  it("refuses an image over a limit that the Images binding cannot read, and without the binding refuses every image over a limit", async () => {
    const agent = await createAgent();
    // Only its header says 9000×10: no decoder reads it, so it cannot be scaled down.
    const wide = await api(`/v1/agents/${agent.id}/runs`, {
      body: { input: [{ type: "text", text: "look" }, image(pngOfSize(9000, 10))] },
    });
    expect(wide.status).toBe(400);
    expect((await wide.json<ErrorBody>()).error.details.fields).toEqual([
      {
        path: "input.1.data",
        message:
          "is 9000×10 px, over the vendors' limits (8000 px on a side, 5 MB as base64, 3.75 MB of image), and could not be read to scale it down",
      },
    ]);
    // Within the limits, an image the binding cannot read is kept as it is (the per-call limits still apply: below).
    const kept = await api(`/v1/agents/${agent.id}/runs`, { body: { input: [image(pngOfSize(3000, 10))] } });
    expect(await kept.json<Run & { input: unknown[] }>()).toMatchObject({
      status: "completed",
      input: [{ type: "image", width: 3000, height: 10 }],
    });

    // A deployment without the binding: what the routes call, with its context.
    const bare: MediaContext = { environment: "development" };
    const refusal = async (data: Uint8Array) => {
      const error = await (async () => resolveInput(parseInput([image(toBase64(data))], bare), bare))().then(
        () => null,
        (e: unknown) => e,
      );
      return error instanceof ApiError ? { status: error.status, fields: error.details.fields } : error;
    };
    expect(await refusal(await gradientPng(8100, 10))).toEqual({
      status: 400,
      fields: [{ path: "input.0.data", message: "is 8100×10 px; images are limited to 8000 px on a side" }],
    });
    const noisy = await noisePng(1200, 1200);
    expect(await refusal(noisy)).toEqual({
      status: 413,
      fields: [
        { path: "input.0.data", message: `The image is ${noisy.byteLength} bytes; images are limited to 5 MB as base64, 3.75 MB of image` },
      ],
    });
    expect(await refusal(await gradientPng(2400, 1200))).toBeNull();
  });

  it("refuses at input a PDF over 100 pages, naming the part, and stores nothing", async () => {
    const agent = await createAgent();
    const long = await api(`/v1/agents/${agent.id}/runs`, {
      body: { input: [{ type: "file", media_type: "application/pdf", name: "a.pdf", data: pdfOfPages(101) }] },
    });
    expect(long.status).toBe(413);
    expect((await long.json<ErrorBody>()).error.details.fields).toEqual([
      { path: "input.0.data", message: "is a PDF of 101 pages; a PDF is limited to 100 pages" },
    ]);
    expect((await (await api(`/v1/agents/${agent.id}/runs`)).json<{ data: unknown[] }>()).data).toEqual([]);
    // Measured and kept with the media: what the per-call limits count.
    const fine = await api(`/v1/agents/${agent.id}/runs`, {
      body: { input: [image(pngOfSize(1000, 300)), { type: "file", media_type: "application/pdf", name: "b.pdf", data: pdfOfPages(3) }] },
    });
    const run = await fine.json<Run & { input: Record<string, unknown>[] }>();
    expect(run.status).toBe("completed");
    expect(run.input).toMatchObject([
      { type: "image", width: 1000, height: 300 },
      { type: "file", name: "b.pdf", pages: 3 },
    ]);
  });

  it("refuses at input an encrypted PDF, naming the part, and stores nothing; the offline model refuses one too", async () => {
    const agent = await createAgent();
    const locked = await api(`/v1/agents/${agent.id}/runs`, {
      body: {
        input: [
          { type: "text", text: "read" },
          { type: "file", media_type: "application/pdf", name: "locked.pdf", data: encryptedPdf() },
        ],
      },
    });
    expect(locked.status).toBe(400);
    expect((await locked.json<ErrorBody>()).error.details.fields).toEqual([
      { path: "input.1.data", message: "is an encrypted (password-protected) PDF; only unencrypted PDFs can be read" },
    ]);
    expect((await (await api(`/v1/agents/${agent.id}/runs`)).json<{ data: unknown[] }>()).data).toEqual([]);
    const document = { type: "document", source: { type: "base64", media_type: "application/pdf", data: encryptedPdf() } };
    expect(await anthropicAnswer([{ role: "user", content: [{ type: "text", text: "read" }, document] }])).toEqual({
      status: 400,
      message: "messages.0.content.1.pdf.source.base64.data: The PDF specified is password protected.",
    });
  });

  /** The images and the notes in place of images one provider request carried. */
  const imagesIn = (body: unknown) => {
    const json = JSON.stringify(body);
    return {
      images: (json.match(/"type":"(image|input_image|image_url)"/g) ?? []).length,
      notes: (json.match(/\[image \(image\/png, med_[0-9a-z]+\) is not available\]/g) ?? []).length,
    };
  };

  /** Three turns of ten 2500 px images each on one session: more than one request may carry. */
  async function imageHeavySession(agentId: string) {
    let session: string | undefined;
    const runs: Run[] = [];
    for (const turn of [1, 2, 3]) {
      const input = [{ type: "text", text: `turn ${turn}` }, ...Array.from({ length: 10 }, () => image(pngOfSize(2500, 2500)))];
      const response = await api(`/v1/agents/${agentId}/runs`, { body: { input, ...(session ? { session_id: session } : {}) } });
      const run = await response.json<Run>();
      expect(run, `turn ${turn}`).toMatchObject({ status: "completed", output: `You said: turn ${turn}` });
      session = run.session_id;
      runs.push(run);
    }
    return runs;
  }

  for (const provider of PROVIDERS) {
    it(`keeps a session working when its history holds more images than one request may carry: the oldest go as notes (${provider})`, async () => {
      const bucket = crypto.randomUUID();
      const model = provider === "anthropic" ? "claude-test" : "gpt-test";
      const agent = await createAgent({ provider, model, base_url: upstreamBase(env.GATEWAY_URL, bucket, provider) });
      await imageHeavySession(agent.id);
      const sent = await requestsOf(env.GATEWAY_URL, bucket);
      // More than 20 images of over 2000 px would be refused: the newest 20 go, the oldest 10 as notes naming them.
      expect(imagesIn(sent.at(-1)?.body)).toEqual({ images: 20, notes: 10 });
      expect(imagesIn(sent.at(0)?.body)).toEqual({ images: 10, notes: 0 });
    });
  }

  it("keeps a session working after a fork onto another provider, with the history's images within the new provider's limits", async () => {
    const bucket = crypto.randomUUID();
    const agent = await createAgent({ provider: "openai", model: "gpt-test", base_url: upstreamBase(env.GATEWAY_URL, bucket, "openai") });
    const runs = await imageHeavySession(agent.id);
    const moved = await api(`/v1/agents/${agent.id}`, {
      method: "PATCH",
      body: { provider: "anthropic", model: "claude-test", base_url: upstreamBase(env.GATEWAY_URL, bucket, "anthropic") },
    });
    expect(moved.status).toBe(200);
    // A fork of the last turn, and a turn after it: both on Anthropic, both within its limits.
    const fork = await api(`/v1/agents/${agent.id}/runs/${runs[2]?.id}/continue`, { body: { fork: true, input: "and now?" } });
    expect(await fork.json<Run>()).toMatchObject({ status: "completed", output: "You said: and now?" });
    const next = await api(`/v1/agents/${agent.id}/runs`, { body: { input: "once more", session_id: runs[0]?.session_id } });
    expect(await next.json<Run>()).toMatchObject({ status: "completed", output: "You said: once more" });
    const sent = await requestsOf(env.GATEWAY_URL, bucket);
    expect(sent.map((request) => request.path)).toEqual([...Array(3).fill("/v1/responses"), "/v1/messages", "/v1/messages"]);
    expect(sent.slice(3).map((request) => imagesIn(request.body))).toEqual([
      { images: 20, notes: 10 },
      { images: 20, notes: 10 },
    ]);
  });

  it("does not send again a turn a provider refused as an invalid request: the session's next turn works", async () => {
    const bucket = crypto.randomUUID();
    const agent = await createAgent({
      provider: "anthropic",
      model: "claude-test",
      base_url: upstreamBase(env.GATEWAY_URL, bucket, "anthropic"),
    });
    const refused = await api(`/v1/agents/${agent.id}/runs`, { body: { input: "[[fail 400 x1]] poisoned" } });
    const failed = await refused.json<Run & { error: { type: string; status: number } }>();
    expect(failed).toMatchObject({ status: "error", error: { type: "provider_error", status: 400 } });
    const next = await api(`/v1/agents/${agent.id}/runs`, { body: { input: "again", session_id: failed.session_id } });
    expect(await next.json<Run>()).toMatchObject({ status: "completed", output: "You said: again" });
    const sent = await requestsOf(env.GATEWAY_URL, bucket);
    expect(JSON.stringify(sent.at(-1)?.body)).not.toContain("poisoned");
    // The transcript keeps the refused turn.
    const transcript = await (await api(`/v1/sessions/${failed.session_id}/transcript`)).json<{ data: { run_id: string }[] }>();
    expect(transcript.data.filter((message) => message.run_id === failed.id)).toHaveLength(1);
  });

  it("the offline model refuses what the Messages API refuses: size on the base64 text, 8000 px, 2000 px past 20 images, 100 media, 100 PDF pages", async () => {
    const ask = (...content: unknown[]) => [{ role: "user", content: [...content, { type: "text", text: "hi" }] }];
    expect(await anthropicAnswer(ask(imageBlock("A".repeat(5 * 1024 * 1024 + 4))))).toEqual({
      status: 400,
      message: "messages.0.content.0.image.source.base64: image exceeds 5 MB maximum: 5242884 bytes > 5242880 bytes",
    });
    expect(await anthropicAnswer(ask(imageBlock(pngOfSize(8001, 5))))).toEqual({
      status: 400,
      message: "messages.0.content.0.image.source.base64.data: At least one of the image dimensions exceed max allowed size: 8000 pixels",
    });
    const many = Array.from({ length: 21 }, (_, i) => imageBlock(i === 0 ? pngOfSize(2001, 5) : TINY_PNG));
    expect(await anthropicAnswer(ask(...many))).toEqual({
      status: 400,
      message:
        "messages.0.content.0.image.source.base64.data: At least one of the image dimensions exceed max allowed size for many-image requests: 2000 pixels",
    });
    expect((await anthropicAnswer(ask(...many.slice(0, 20)))).status).toBe(200);
    expect(await anthropicAnswer(ask(...Array.from({ length: 101 }, () => imageBlock(TINY_PNG))))).toEqual({
      status: 400,
      message: "Too much media: 0 document pages + 101 images > 100",
    });
    const pdf = (pages: number) => ({
      type: "document",
      source: { type: "base64", media_type: "application/pdf", data: pdfOfPages(pages) },
    });
    expect(await anthropicAnswer(ask(pdf(60), pdf(41)))).toEqual({
      status: 400,
      message: "messages.0.content.1.pdf.source.base64.data: A maximum of 100 PDF pages may be provided.",
    });
  });

  it("keeps a call's media within the 32 MB request that the rest of the call leaves, oldest media first out", () => {
    const MB = 1024 * 1024;
    const photo = (n: number) => ({
      type: "image" as const,
      media_type: "image/png",
      media_id: `med_${n}`,
      size: 4 * MB,
      width: 900,
      height: 900,
    });
    const turn = (n: number, text: string): Message => ({ role: "user", content: [photo(n), { type: "text", text }] });
    const base64 = (blocks: { size?: number }[]) => blocks.reduce((sum, block) => sum + Math.ceil(((block.size ?? 0) * 4) / 3), 0);
    // Short text: the per-call media cap binds (five 4 MB images of six).
    const short = callMedia([1, 2, 3, 4, 5, 6].map((n) => turn(n, "look")));
    expect(short.map((block) => block.media_id)).toEqual(["med_6", "med_5", "med_4", "med_3", "med_2"]);
    expect(short.reduce((sum, block) => sum + (block.size ?? 0), 0)).toBeLessThanOrEqual(MAX_CALL_MEDIA_BYTES);
    // 12 MB of tool output and text in the history: fewer images fit, and the body stays under 32 MB.
    const long: Message[] = [
      ...[1, 2, 3, 4, 5].map((n) => turn(n, "look")),
      { role: "tool", content: [{ type: "tool_result", tool_call_id: "call_1", output: "x".repeat(12 * MB), is_error: false }] },
      turn(6, "and this one"),
    ];
    const kept = callMedia(long);
    expect(kept.map((block) => block.media_id)).toEqual(["med_6", "med_5", "med_4"]);
    expect(base64(kept) + JSON.stringify(long).length).toBeLessThan(MAX_REQUEST_BYTES);
  });

  it("the offline model answers a Messages body over 32 MB with Anthropic's 413 request_too_large", async () => {
    const big = "A".repeat(MAX_REQUEST_BYTES);
    const response = await handleMockModel(
      new Request("http://mock.local/v1/messages", {
        method: "POST",
        headers: { "x-api-key": "k" },
        body: JSON.stringify({ model: "mock-1", max_tokens: 64, messages: [{ role: "user", content: big }] }),
      }),
    );
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({
      type: "error",
      error: { type: "request_too_large", message: "Request exceeds the maximum allowed number of bytes." },
    });
  });
});
