import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { handleMockModel } from "../src/mock-model/index";
import { api, createAgent } from "./support/http";
import { encryptedPdf, pdfOfPages, pngOfSize, TINY_PNG } from "./support/media";
import { requestsOf, upstreamBase } from "./support/upstreams";

type Run = { id: string; status: string; session_id: string; output: unknown };
type ErrorBody = { error: { type: string; message: string; details: { fields: { path: string; message: string }[] } } };

const image = (data: string) => ({ type: "image", media_type: "image/png", data });

/** Posts a raw Messages body to the offline model and returns its status and error message. */
async function anthropicAnswer(messages: unknown[]) {
  const response = await handleMockModel(
    new Request("http://mock.local/v1/messages", { method: "POST", headers: { "x-api-key": "k" }, body: JSON.stringify({ model: "mock-1", max_tokens: 64, messages }) }),
  );
  return { status: response.status, message: (await response.json<{ error?: { message: string } }>()).error?.message };
}

const imageBlock = (data: string) => ({ type: "image", source: { type: "base64", media_type: "image/png", data } });

describe("media within the vendors' limits", () => {
  it("refuses at input an image over 8000 px on a side and a PDF over 100 pages, naming the part, and stores nothing", async () => {
    const agent = await createAgent();
    const wide = await api(`/v1/agents/${agent.id}/runs`, { body: { input: [{ type: "text", text: "look" }, image(pngOfSize(9000, 10))] } });
    expect(wide.status).toBe(400);
    expect((await wide.json<ErrorBody>()).error.details.fields).toEqual([{ path: "input.1.data", message: "is 9000×10 px; images are limited to 8000 px on a side" }]);
    const long = await api(`/v1/agents/${agent.id}/runs`, { body: { input: [{ type: "file", media_type: "application/pdf", name: "a.pdf", data: pdfOfPages(101) }] } });
    expect(long.status).toBe(413);
    expect((await long.json<ErrorBody>()).error.details.fields).toEqual([{ path: "input.0.data", message: "is a PDF of 101 pages; a PDF is limited to 100 pages" }]);
    expect((await (await api(`/v1/agents/${agent.id}/runs`)).json<{ data: unknown[] }>()).data).toEqual([]);
    // Measured and kept with the media: what the per-call limits count.
    const fine = await api(`/v1/agents/${agent.id}/runs`, { body: { input: [image(pngOfSize(8000, 3000)), { type: "file", media_type: "application/pdf", name: "b.pdf", data: pdfOfPages(3) }] } });
    const run = await fine.json<Run & { input: Record<string, unknown>[] }>();
    expect(run.status).toBe("completed");
    expect(run.input).toMatchObject([
      { type: "image", width: 8000, height: 3000 },
      { type: "file", name: "b.pdf", pages: 3 },
    ]);
  });

  it("refuses at input an encrypted PDF, naming the part, and stores nothing; the offline model refuses one too", async () => {
    const agent = await createAgent();
    const locked = await api(`/v1/agents/${agent.id}/runs`, {
      body: { input: [{ type: "text", text: "read" }, { type: "file", media_type: "application/pdf", name: "locked.pdf", data: encryptedPdf() }] },
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

  it("keeps a session working when its history holds more images than one request may carry: the oldest go as notes", async () => {
    const bucket = crypto.randomUUID();
    const agent = await createAgent({ provider: "anthropic", model: "claude-test", base_url: upstreamBase(env.GATEWAY_URL, bucket, "anthropic") });
    let session: string | undefined;
    for (const turn of [1, 2, 3]) {
      const input = [{ type: "text", text: `turn ${turn}` }, ...Array.from({ length: 10 }, () => image(pngOfSize(2500, 2500)))];
      const response = await api(`/v1/agents/${agent.id}/runs`, { body: { input, ...(session ? { session_id: session } : {}) } });
      const run = await response.json<Run>();
      expect(run, `turn ${turn}`).toMatchObject({ status: "completed", output: `You said: turn ${turn}` });
      session = run.session_id;
    }
    const sent = await requestsOf(env.GATEWAY_URL, bucket);
    const last = sent.at(-1)?.body as { messages: { content: { type: string; text?: string }[] }[] };
    const blocks = last.messages.flatMap((message) => message.content);
    // More than 20 images of over 2000 px would be refused: the newest 20 go, the oldest 10 as notes naming them.
    expect(blocks.filter((block) => block.type === "image")).toHaveLength(20);
    const notes = blocks.filter((block) => block.type === "text" && /^\[image \(image\/png, med_[0-9a-z]+\) is not available\]$/.test(block.text ?? ""));
    expect(notes).toHaveLength(10);
    expect(last.messages[0]?.content.filter((block) => block.type === "image")).toEqual([]);
  });

  it("does not send again a turn a provider refused as an invalid request: the session's next turn works", async () => {
    const bucket = crypto.randomUUID();
    const agent = await createAgent({ provider: "anthropic", model: "claude-test", base_url: upstreamBase(env.GATEWAY_URL, bucket, "anthropic") });
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
      message: "messages.0.content.0.image.source.base64.data: At least one of the image dimensions exceed max allowed size for many-image requests: 2000 pixels",
    });
    expect((await anthropicAnswer(ask(...many.slice(0, 20)))).status).toBe(200);
    expect(await anthropicAnswer(ask(...Array.from({ length: 101 }, () => imageBlock(TINY_PNG))))).toEqual({ status: 400, message: "Too much media: 0 document pages + 101 images > 100" });
    const pdf = (pages: number) => ({ type: "document", source: { type: "base64", media_type: "application/pdf", data: pdfOfPages(pages) } });
    expect(await anthropicAnswer(ask(pdf(60), pdf(41)))).toEqual({ status: 400, message: "messages.0.content.1.pdf.source.base64.data: A maximum of 100 PDF pages may be provided." });
  });
});
