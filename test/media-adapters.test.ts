import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Message } from "../src/core/messages";
import { base64Length, decodeBase64, encodeBase64 } from "../src/core/base64";
import { loadMedia } from "../src/media/load";
import { sniffImage } from "../src/media/sniff";
import { putMedia } from "../src/media/store";
import { handleMockModel } from "../src/mock-model/index";
import { AnthropicProvider } from "../src/providers/anthropic";
import { toAnthropicMessages } from "../src/providers/anthropic-messages";
import { OpenAIChatProvider } from "../src/providers/openai-chat";
import { toChatMessages } from "../src/providers/openai-chat-messages";
import { OpenAIResponsesProvider } from "../src/providers/openai-responses";
import { toResponsesInput } from "../src/providers/openai-responses-input";
import { inProcessFetch, type SdkClientConfig } from "../src/providers/sdk-config";
import type { MediaData, ModelProvider } from "../src/providers/types";
import { gifOfFrames } from "./support/gif";
import { fromBase64, pngOfSize, TINY_PNG, toBase64 } from "./support/media";

const PDF = toBase64(new TextEncoder().encode("%PDF-1.4\n%%EOF\n"));
const NOTES = toBase64(new TextEncoder().encode("Notes: café ☕"));

const MEDIA: Record<string, MediaData> = {
  med_img: { media_type: "image/png", data: TINY_PNG },
  med_pdf: { media_type: "application/pdf", data: PDF },
  med_txt: { media_type: "text/plain", data: NOTES },
};

const history: Message[] = [
  {
    role: "user",
    content: [
      { type: "text", text: "Look" },
      { type: "image", media_type: "image/png", media_id: "med_img", size: 70, width: 1, height: 1 },
      { type: "file", media_type: "application/pdf", media_id: "med_pdf", size: 15, name: "a.pdf" },
      { type: "file", media_type: "text/plain", media_id: "med_txt", size: 16, name: "notes.txt" },
      { type: "image", media_type: "image/jpeg", media_id: "med_gone", size: 9 },
    ],
  },
];

const note = "[image (image/jpeg, med_gone) is not available]";

describe("media blocks in each provider's wire format", () => {
  it("Anthropic: image blocks, PDF documents, text documents; a note for missing bytes", () => {
    expect(toAnthropicMessages(history, MEDIA)).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "Look" },
          { type: "image", source: { type: "base64", media_type: "image/png", data: TINY_PNG } },
          { type: "document", source: { type: "base64", media_type: "application/pdf", data: PDF }, title: "a.pdf" },
          { type: "document", source: { type: "text", media_type: "text/plain", data: "Notes: café ☕" }, title: "notes.txt" },
          { type: "text", text: note },
        ],
      },
    ]);
  });

  it("OpenAI Responses: input_image and input_file data URLs in the user message, in order", () => {
    expect(toResponsesInput(history, MEDIA)).toEqual([
      {
        type: "message",
        role: "user",
        content: [
          { type: "input_text", text: "Look" },
          { type: "input_image", image_url: `data:image/png;base64,${TINY_PNG}`, detail: "auto" },
          { type: "input_file", file_data: `data:application/pdf;base64,${PDF}`, filename: "a.pdf" },
          { type: "input_file", file_data: `data:text/plain;base64,${NOTES}`, filename: "notes.txt" },
          { type: "input_text", text: note },
        ],
      },
    ]);
  });

  it("Chat Completions: image_url and file parts, text files framed as text; text-only messages stay strings", () => {
    expect(toChatMessages("Be brief.", [...history, { role: "user", content: [{ type: "text", text: "plain" }] }], MEDIA)).toEqual([
      { role: "system", content: "Be brief." },
      {
        role: "user",
        content: [
          { type: "text", text: "Look" },
          { type: "image_url", image_url: { url: `data:image/png;base64,${TINY_PNG}` } },
          { type: "file", file: { file_data: `data:application/pdf;base64,${PDF}`, filename: "a.pdf" } },
          { type: "text", text: '<file name="notes.txt" media_type="text/plain">\nNotes: café ☕\n</file>' },
          { type: "text", text: note },
        ],
      },
      { role: "user", content: "plain" },
    ]);
  });

  it("OpenAI: an image over 30,000 patches or of unknown size goes at high detail (OpenAI scales it down); an animated GIF as a note", () => {
    const image = (id: string, size: { width?: number; height?: number }, media_type: "image/png" | "image/gif" = "image/png") => ({
      type: "image" as const,
      media_type,
      media_id: id,
      size: 70,
      ...size,
    });
    const media: Record<string, MediaData> = {
      big: { media_type: "image/png", data: pngOfSize(8000, 6000) },
      fits: { media_type: "image/png", data: pngOfSize(5000, 6000) },
      unmeasured: { media_type: "image/png", data: TINY_PNG },
      moving: { media_type: "image/gif", data: gifOfFrames(2) },
      still: { media_type: "image/gif", data: gifOfFrames(1) },
    };
    const message: Message = {
      role: "user",
      content: [
        image("big", { width: 8000, height: 6000 }),
        image("fits", { width: 5000, height: 6000 }),
        image("unmeasured", {}),
        image("moving", { width: 1, height: 1 }, "image/gif"),
        image("still", { width: 1, height: 1 }, "image/gif"),
      ],
    };
    const animatedNote = "[image (image/gif, moving) is not available]";
    const [responses] = toResponsesInput([message], media);
    expect(responses).toMatchObject({
      content: [
        { detail: "high" },
        { detail: "auto" },
        { detail: "high" },
        { type: "input_text", text: animatedNote },
        { type: "input_image", detail: "auto" },
      ],
    });
    const [chat] = toChatMessages(undefined, [message], media);
    expect(chat?.content).toEqual([
      { type: "image_url", image_url: { url: `data:image/png;base64,${pngOfSize(8000, 6000)}`, detail: "high" } },
      { type: "image_url", image_url: { url: `data:image/png;base64,${pngOfSize(5000, 6000)}` } },
      { type: "image_url", image_url: { url: `data:image/png;base64,${TINY_PNG}`, detail: "high" } },
      { type: "text", text: animatedNote },
      { type: "image_url", image_url: { url: `data:image/gif;base64,${gifOfFrames(1)}` } },
    ]);
  });

  it("sends a note for every media block when no bytes were loaded", () => {
    const wire = toAnthropicMessages(history);
    expect(wire[0]?.content).toHaveLength(5);
    expect(JSON.stringify(wire)).not.toContain(TINY_PNG);
    expect(JSON.stringify(wire)).toContain('[file \\"a.pdf\\" (application/pdf, med_pdf) is not available]');
  });
});

/** An adapter on the in-process offline model that records each request body. */
function recorded(build: (config: SdkClientConfig) => ModelProvider, baseURL: string) {
  const bodies: unknown[] = [];
  const serve = inProcessFetch(async (request) => {
    bodies.push(await request.clone().json());
    return handleMockModel(request);
  });
  return { provider: build({ apiKey: "mock-key", baseURL, fetch: serve }), bodies };
}

const ADAPTERS = [
  {
    name: "anthropic",
    build: (c: SdkClientConfig) => new AnthropicProvider(c),
    base: "http://mock.local",
    find: /"type":"image","source":\{"type":"base64"/,
  },
  {
    name: "openai",
    build: (c: SdkClientConfig) => new OpenAIResponsesProvider(c),
    base: "http://mock.local/v1",
    find: /"type":"input_image","image_url":"data:image\/png;base64,/,
  },
  {
    name: "openai-chat",
    build: (c: SdkClientConfig) => new OpenAIChatProvider(c),
    base: "http://mock.local/v1",
    find: /"type":"image_url","image_url":\{"url":"data:image\/png;base64,/,
  },
];

describe("media through the real SDKs to the offline model", () => {
  for (const { name, build, base, find } of ADAPTERS) {
    it(`${name}: the request carries the media and the offline model echoes the text`, async () => {
      const { provider, bodies } = recorded(build, base);
      const response = await provider.call(
        { model: "mock-1", messages: history, tools: [], max_output_tokens: 64, attempt: 1, media: MEDIA },
        {},
      );
      const text = response.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
      expect(text).toMatch(/^You said: Look/);
      const sent = JSON.stringify(bodies[0]);
      expect(sent).toMatch(find);
      expect(sent).toContain(PDF);
    });
  }
});

describe("loading media for a model call", () => {
  it("reads the blocks' bytes from R2 as base64, newest first within the budget, skipping missing objects", async () => {
    const scope = { tenant: "load-test", session_id: `ses-${crypto.randomUUID()}` };
    await putMedia(env.MEDIA, scope, "med_a", { media_type: "image/png", bytes: fromBase64(TINY_PNG), run_id: "run_1" });
    await putMedia(env.MEDIA, scope, "med_b", { media_type: "text/plain", bytes: fromBase64(NOTES), run_id: "run_1", name: "n.txt" });
    await putMedia(env.MEDIA, scope, "med_old", { media_type: "image/png", bytes: fromBase64(TINY_PNG), run_id: "run_0" });
    const messages: Message[] = [
      // Declared over the call's 20 MB budget once the newer ones are counted: left out.
      { role: "user", content: [{ type: "image", media_type: "image/png", media_id: "med_old", size: 19 * 1024 * 1024 }] },
      { role: "assistant", content: [{ type: "text", text: "ok" }] },
      {
        role: "user",
        content: [
          { type: "image", media_type: "image/png", media_id: "med_a", size: 2 * 1024 * 1024 },
          { type: "file", media_type: "text/plain", media_id: "med_b", size: 16, name: "n.txt" },
          { type: "image", media_type: "image/png", media_id: "med_missing", size: 10 },
        ],
      },
    ];
    const media = await loadMedia(env.MEDIA, scope, messages);
    expect(media).toEqual({
      med_a: { media_type: "image/png", data: TINY_PNG },
      med_b: { media_type: "text/plain", data: NOTES },
    });
    // Another session's scope sees none of them.
    expect(await loadMedia(env.MEDIA, { ...scope, session_id: "other" }, messages)).toEqual({});
  });
});

describe("base64 and image signatures", () => {
  it("computes decoded sizes before decoding and round-trips bytes", () => {
    expect(base64Length("")).toBe(0);
    expect(base64Length("AA==")).toBe(1);
    expect(base64Length("AAA=")).toBe(2);
    expect(base64Length("AAAA")).toBe(3);
    expect(base64Length("AA")).toBe(1);
    expect(base64Length("A")).toBeNull();
    expect(base64Length("AA=")).toBeNull();
    expect(base64Length("A=AA")).toBeNull();
    expect(base64Length("AB-_")).toBeNull();
    const bytes = Uint8Array.from({ length: 70_000 }, (_, i) => (i * 31) % 256);
    const text = encodeBase64(bytes);
    expect(text).toBe(toBase64(bytes));
    expect(base64Length(text)).toBe(bytes.length);
    expect(decodeBase64(text)).toEqual(bytes);
  });

  it("recognises PNG, JPEG, GIF and WebP by their bytes", () => {
    const ascii = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));
    expect(sniffImage(fromBase64(TINY_PNG))).toBe("image/png");
    expect(sniffImage(new Uint8Array([0xff, 0xd8, 0xff, 0xdb]))).toBe("image/jpeg");
    expect(sniffImage(ascii("GIF87a...."))).toBe("image/gif");
    expect(sniffImage(ascii("RIFF\0\0\0\0WEBPVP8 "))).toBe("image/webp");
    expect(sniffImage(ascii("RIFF\0\0\0\0WAVEfmt "))).toBeNull();
    expect(sniffImage(ascii("%PDF-1.4"))).toBeNull();
  });
});
