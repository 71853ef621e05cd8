import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, createAgent, createTenantToken, uniqueTenant } from "./support/http";
import { fromBase64, mediaKeys, pngWithText, TINY_PNG, toBase64 } from "./support/media";
import { postRun, runTurn, transcriptOf, type Run } from "./support/runs";

type ErrorBody = { error: { type: string; message: string; details: { fields?: { path: string; message: string }[] } } };

const NOTES = "Meeting notes: ship the media issue. ".repeat(100);
const notesBase64 = toBase64(new TextEncoder().encode(NOTES));

/** A tenant of its own, so that its R2 prefix and D1 rows belong to this test alone. */
async function tenantWithAgent(fields: Record<string, unknown> = {}) {
  const tenant = uniqueTenant("media");
  const token = await createTenantToken(tenant);
  const agent = await createAgent(fields, token);
  return { tenant, token, agent };
}

const countRows = async (tenant: string) => {
  const rows = await env.DB.batch(
    ["sessions", "runs", "messages"].map((t) => env.DB.prepare(`SELECT COUNT(*) AS n FROM ${t} WHERE tenant = ?`).bind(tenant)),
  );
  return rows.map((r) => (r.results[0] as { n: number }).n);
};

async function expectError(response: Response, status: number, path?: string): Promise<ErrorBody> {
  expect(response.status).toBe(status);
  const body = await response.json<ErrorBody>();
  expect(body.error.type).toBe(status === 400 ? "invalid_request" : status === 413 ? "payload_too_large" : body.error.type);
  if (path) expect(body.error.details.fields?.map((f) => f.path)).toContain(path);
  return body;
}

const PROVIDERS = [
  { name: "anthropic (mock)", fields: { provider: "mock" } },
  { name: "openai responses", fields: { provider: "openai", base_url: "mock:" } },
  { name: "openai chat", fields: { provider: "openai-chat", base_url: "mock:" } },
];

describe("images and files in a run's input", () => {
  for (const { name, fields } of PROVIDERS) {
    it(`stores them once in R2, references them, and sends them to the model (${name})`, async () => {
      const { tenant, token, agent } = await tenantWithAgent(fields);
      const image = pngWithText(4000);
      const sessionId = `media-${crypto.randomUUID()}`;
      const run = await runTurn(
        agent.id,
        {
          session_id: sessionId,
          input: [
            { type: "text", text: "Describe these" },
            { type: "image", media_type: "image/png", data: toBase64(image) },
            { type: "file", media_type: "text/plain", data: notesBase64, name: "notes.txt" },
          ],
        },
        token,
      );
      expect(run.status).toBe("completed");
      expect(String(run.output)).toMatch(/^You said: Describe these/);

      // The Run's input holds references, never the bytes.
      const [text, imageRef, fileRef] = run.input as Record<string, unknown>[];
      expect(text).toEqual({ type: "text", text: "Describe these" });
      expect(imageRef).toEqual({
        type: "image",
        media_type: "image/png",
        media_id: expect.stringMatching(/^med_/),
        size: image.length,
        width: 1,
        height: 1,
      });
      expect(fileRef).toEqual({
        type: "file",
        media_type: "text/plain",
        media_id: expect.stringMatching(/^med_/),
        size: NOTES.length,
        name: "notes.txt",
      });
      expect(JSON.stringify(run)).not.toContain(notesBase64.slice(0, 40));
      const stored = await (await api(`/v1/agents/${agent.id}/runs/${run.id}`, {}, token)).json<Run>();
      expect(stored.input).toEqual(run.input);

      // The transcript's user message holds image and file blocks.
      const transcript = await transcriptOf(sessionId, token);
      expect(transcript[0]?.content).toEqual([
        { type: "text", text: "Describe these" },
        expect.objectContaining({ type: "image", media_type: "image/png", media_id: imageRef?.media_id }),
        expect.objectContaining({ type: "file", media_type: "text/plain", media_id: fileRef?.media_id, name: "notes.txt" }),
      ]);

      // The bytes are in R2, once, under tenant/session/media_id.
      const imageObject = await env.MEDIA.get(`${tenant}/${sessionId}/${String(imageRef?.media_id)}`);
      expect(new Uint8Array((await imageObject?.arrayBuffer()) ?? new ArrayBuffer(0))).toEqual(image);
      expect(imageObject?.httpMetadata?.contentType).toBe("image/png");
      const fileObject = await env.MEDIA.get(`${tenant}/${sessionId}/${String(fileRef?.media_id)}`);
      expect(await fileObject?.text()).toBe(NOTES);
      expect((await mediaKeys(`${tenant}/`)).sort()).toEqual(
        [`${tenant}/${sessionId}/${String(imageRef?.media_id)}`, `${tenant}/${sessionId}/${String(fileRef?.media_id)}`].sort(),
      );

      // The provider request carried the bytes: the offline model counts ceil(body length / 4)
      // input tokens, and the image alone is over 5000 base64 characters, the file 3700 characters.
      const plain = await runTurn(agent.id, { input: "Describe these" }, token);
      expect(run.metrics.input_tokens - plain.metrics.input_tokens).toBeGreaterThan((5000 + 3700) / 4);

      // A later turn sends the earlier media again (from R2) and still echoes its own text.
      const next = await runTurn(agent.id, { session_id: sessionId, input: "And now?" }, token);
      expect(next.output).toBe("You said: And now?");
      expect(next.metrics.input_tokens).toBeGreaterThan(run.metrics.input_tokens);
    });
  }

  it("accepts a PDF and every image type whose bytes match it", async () => {
    const { token, agent } = await tenantWithAgent();
    const pdf = toBase64(new TextEncoder().encode("%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"));
    const gif = toBase64(new TextEncoder().encode("GIF89a\x01\x00\x01\x00\x00\x00\x00;"));
    const jpeg = toBase64(new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 0xff, 0xd9]));
    const webp = toBase64(
      new TextEncoder().encode("RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00/\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00"),
    );
    const run = await runTurn(
      agent.id,
      {
        input: [
          { type: "text", text: "Read these" },
          { type: "file", media_type: "application/pdf", data: pdf, name: "a.pdf" },
          { type: "file", media_type: "text/markdown", data: toBase64(new TextEncoder().encode("# Title\n")), name: "README.md" },
          { type: "image", media_type: "image/gif", data: gif },
          { type: "image", media_type: "image/jpeg", data: jpeg },
          { type: "image", media_type: "image/webp", data: webp },
        ],
      },
      token,
    );
    expect(run.status).toBe("completed");
    expect(run.input.map((p) => `${p.type}:${p.type === "text" ? "" : p.media_type}`)).toEqual([
      "text:",
      "file:application/pdf",
      "file:text/markdown",
      "image:image/gif",
      "image:image/jpeg",
      "image:image/webp",
    ]);
  });

  it("fetches an image URL once at creation and stores it like base64 data", async () => {
    const { tenant, token, agent } = await tenantWithAgent({ provider: "openai", base_url: "mock:" });
    const run = await runTurn(
      agent.id,
      {
        input: [
          { type: "text", text: "What is this?" },
          { type: "image", url: `${env.TOOL_SERVER_URL}/media/png` },
          { type: "image", url: `${env.TOOL_SERVER_URL}/media/redirect`, media_type: "image/png" },
        ],
      },
      token,
    );
    expect(run.status).toBe("completed");
    const refs = run.input.slice(1) as { media_id: string; media_type: string; size: number }[];
    expect(refs.map((r) => [r.media_type, r.size])).toEqual([
      ["image/png", fromBase64(TINY_PNG).length],
      ["image/png", fromBase64(TINY_PNG).length],
    ]);
    expect(JSON.stringify(run.input)).not.toContain("url");
    const object = await env.MEDIA.get(`${tenant}/${run.session_id}/${refs[0]?.media_id}`);
    expect(new Uint8Array((await object?.arrayBuffer()) ?? new ArrayBuffer(0))).toEqual(fromBase64(TINY_PNG));
  });

  it("refuses bad image URLs with 400 (413 when too big), storing nothing", async () => {
    const { tenant, token, agent } = await tenantWithAgent();
    const cases: [string, number, Record<string, unknown>][] = [
      ["not an image", 400, { url: `${env.TOOL_SERVER_URL}/media/text` }],
      ["404", 400, { url: `${env.TOOL_SERVER_URL}/media/missing` }],
      ["not http", 400, { url: "ftp://example.com/a.png" }],
      ["not absolute", 400, { url: "/a.png" }],
      ["wrong declared type", 400, { url: `${env.TOOL_SERVER_URL}/media/png`, media_type: "image/jpeg" }],
      // With the Images binding an image up to 20 MB is scaled down; a larger one is not read past 20 MB.
      ["over 20 MB", 413, { url: `${env.TOOL_SERVER_URL}/media/big?mb=21` }],
    ];
    for (const [label, status, part] of cases) {
      const response = await postRun(
        agent.id,
        {
          input: [
            { type: "text", text: "hi" },
            { type: "image", ...part },
          ],
        },
        token,
      );
      expect(response.status, label).toBe(status);
      await expectError(response, status, "input.1.url");
    }
    expect(await mediaKeys(`${tenant}/`)).toEqual([]);
    expect(await countRows(tenant)).toEqual([0, 0, 0]);
  });

  it("answers 400 naming the field for unsupported media types, bad base64 and bad parts, storing nothing", async () => {
    const { tenant, token, agent } = await tenantWithAgent();
    const sessionId = `bad-${crypto.randomUUID()}`;
    const png = { type: "image", media_type: "image/png", data: TINY_PNG };
    const cases: [Record<string, unknown>, string][] = [
      [{ type: "image", media_type: "image/bmp", data: TINY_PNG }, "input.1.media_type"],
      [{ type: "file", media_type: "application/zip", data: TINY_PNG, name: "a.zip" }, "input.1.media_type"],
      [{ type: "file", media_type: "image/png", data: TINY_PNG, name: "a.png" }, "input.1.media_type"],
      [{ type: "image", media_type: "image/png", data: "not base64!" }, "input.1.data"],
      [{ type: "image", media_type: "image/png", data: `data:image/png;base64,${TINY_PNG}` }, "input.1.data"],
      [{ type: "image", media_type: "image/jpeg", data: TINY_PNG }, "input.1.data"],
      [{ type: "file", media_type: "application/pdf", data: TINY_PNG, name: "a.pdf" }, "input.1.data"],
      [{ type: "file", media_type: "text/plain", data: toBase64(new Uint8Array([0xff, 0xfe, 0xfd])), name: "a.txt" }, "input.1.data"],
      [{ type: "file", media_type: "text/plain", data: notesBase64 }, "input.1.name"],
      [{ type: "image", data: TINY_PNG }, "input.1.media_type"],
      [{ type: "image", media_type: "image/png" }, "input.1.data"],
      [{ type: "image", media_type: "image/png", data: TINY_PNG, url: "https://example.com/a.png" }, "input.1.url"],
      [{ ...png, detail: "high" }, "input.1.detail"],
      [{ type: "video", data: TINY_PNG }, "input.1.type"],
    ];
    for (const [part, path] of cases) {
      const response = await postRun(agent.id, { session_id: sessionId, input: [png, part] }, token);
      await expectError(response, 400, path);
    }
    expect(await mediaKeys(`${tenant}/`)).toEqual([]);
    expect(await countRows(tenant)).toEqual([0, 0, 0]);
    expect((await api(`/v1/sessions/${sessionId}`, {}, token)).status).toBe(404);
  });

  it("answers 413 naming the part for more than 20 parts, storing nothing; an image of exactly 5 MB as base64 is stored as it is", async () => {
    const { tenant, token, agent } = await tenantWithAgent();
    // 5 MB of base64 is 3.75 MB of image: the limit counts the base64 text, as Anthropic's does
    // (a larger image is scaled down by the Images binding, or refused without it: media-limits.test.ts).
    const big = new Uint8Array(((5 * 1024 * 1024) / 4) * 3);
    big.set(fromBase64(TINY_PNG));
    const limit = await postRun(agent.id, { input: [{ type: "image", media_type: "image/png", data: toBase64(big) }] }, token);
    expect(limit.status).toBe(200);
    const accepted = await limit.json<Run>();
    expect(await mediaKeys(`${tenant}/`)).toHaveLength(1);
    const deleted = await api(`/v1/sessions/${accepted.session_id}`, { method: "DELETE" }, token);
    expect(deleted.status).toBe(204);

    const parts = Array.from({ length: 21 }, () => ({ type: "image", media_type: "image/png", data: TINY_PNG }));
    await expectError(await postRun(agent.id, { input: parts }, token), 413, "input.20");
    expect((await postRun(agent.id, { input: parts.slice(0, 20) }, token)).status).toBe(200);
    expect(await mediaKeys(`${tenant}/`)).toHaveLength(20);
  });

  it("stores nothing when the turn is refused: 409 session_busy, 404 agent", async () => {
    const { tenant, token, agent } = await tenantWithAgent({
      tools: [{ type: "client", name: "ask_user", parameters: { type: "object", properties: {} } }],
    });
    const paused = await runTurn(agent.id, { input: "[[tool ask_user {}]] hold the session" }, token);
    expect(paused.status).toBe("paused");
    const input = [
      { type: "text", text: "describe" },
      { type: "image", media_type: "image/png", data: TINY_PNG },
      { type: "file", media_type: "text/plain", data: notesBase64, name: "notes.txt" },
    ];
    const busy = await postRun(agent.id, { session_id: paused.session_id, input }, token);
    await expectError(busy, 409);
    expect(await mediaKeys(`${tenant}/`)).toEqual([]);

    await expectError(await postRun("no-such-agent", { input }, token), 404);
    expect(await mediaKeys(`${tenant}/`)).toEqual([]);
    expect(await transcriptOf(paused.session_id, token)).toHaveLength(2);
  });

  it("keeps one copy when a request is retried with the same Idempotency-Key", async () => {
    const { tenant, token, agent } = await tenantWithAgent();
    const body = {
      input: [
        { type: "text", text: "once" },
        { type: "image", media_type: "image/png", data: TINY_PNG },
      ],
    };
    const headers = { "idempotency-key": `media-${crypto.randomUUID()}` };
    const first = await api(`/v1/agents/${agent.id}/runs`, { body, headers }, token);
    const second = await api(`/v1/agents/${agent.id}/runs`, { body, headers }, token);
    const [a, b] = [await first.json<Run>(), await second.json<Run>()];
    expect(b.id).toBe(a.id);
    expect(b.input).toEqual(a.input);
    const ref = a.input[1] as { media_id: string };
    expect(await mediaKeys(`${tenant}/`)).toEqual([`${tenant}/${a.session_id}/${ref.media_id}`]);
  });

  it("deletes a session's media with the session", async () => {
    const { tenant, token, agent } = await tenantWithAgent();
    const input = [
      { type: "text", text: "keep this" },
      { type: "image", media_type: "image/png", data: TINY_PNG },
    ];
    const kept = await runTurn(agent.id, { input }, token);
    const first = await runTurn(agent.id, { input }, token);
    await runTurn(agent.id, { session_id: first.session_id, input }, token);
    expect(await mediaKeys(`${tenant}/${first.session_id}/`)).toHaveLength(2);

    const deleted = await api(`/v1/sessions/${first.session_id}`, { method: "DELETE" }, token);
    expect(deleted.status).toBe(204);
    expect(await mediaKeys(`${tenant}/${first.session_id}/`)).toEqual([]);
    // Another session's media stay.
    expect(await mediaKeys(`${tenant}/${kept.session_id}/`)).toHaveLength(1);
  });
});
