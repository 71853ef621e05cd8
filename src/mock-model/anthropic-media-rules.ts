import { decodeBase64 } from "../core/base64";
import { imageSize, pdfEncrypted, pdfPages } from "../media/image-size";
import { isImageType } from "../media/limits";
import { InvalidRequest } from "./conversation";
import { asArray, isObject, type JsonObject } from "./values";

/** The Messages API's media limits (docs/providers.md, "Anthropic Messages: the rules Agentry follows"). */
const IMAGE_BASE64_BYTES = 5 * 1024 * 1024;
const MAX_SIDE_PX = 8000;
const MANY_IMAGES = 20;
const MANY_SIDE_PX = 2000;
const MAX_MEDIA = 100;
const MAX_PDF_PAGES = 100;

type Found = { path: string; kind: "image" | "pdf"; data: string; mediaType: string };

/** Every base64 image and PDF of the messages (tool results' content included), with its field path. */
function mediaOf(messages: JsonObject[]): Found[] {
  const found: Found[] = [];
  const visit = (blocks: unknown, path: string) => {
    asArray(blocks).forEach((block, index) => {
      if (!isObject(block)) return;
      const at = `${path}.${index}`;
      const source = isObject(block.source) ? block.source : null;
      if (source?.type === "base64" && typeof source.data === "string") {
        const mediaType = String(source.media_type ?? "");
        if (block.type === "image") found.push({ path: `${at}.image.source.base64`, kind: "image", data: source.data, mediaType });
        if (block.type === "document" && mediaType === "application/pdf")
          found.push({ path: `${at}.pdf.source.base64`, kind: "pdf", data: source.data, mediaType });
      }
      if (block.type === "tool_result") visit(block.content, `${at}.content`);
    });
  };
  messages.forEach((message, index) => {
    visit(typeof message.content === "string" ? [] : message.content, `messages.${index}.content`);
  });
  return found;
}

/** The size of a base64 image from its header alone (the first 64 KB of its data); null when it cannot be read. */
export function base64ImageSize(mediaType: string, data: string): { width: number; height: number } | null {
  if (!isImageType(mediaType)) return null;
  const head = data.slice(0, 65_536 - (65_536 % 4));
  try {
    return imageSize(mediaType, decodeBase64(head));
  } catch {
    return null;
  }
}

const sizeOf = (item: Found) => base64ImageSize(item.mediaType, item.data);

/** Refuses, with the API's own messages, images and PDFs over the Messages API's limits. */
export function checkAnthropicMedia(messages: JsonObject[]): void {
  const media = mediaOf(messages);
  const images = media.filter((item) => item.kind === "image");
  let pages = 0;
  for (const item of media) {
    if (item.kind === "pdf") {
      const bytes = decodeBase64(item.data);
      if (pdfEncrypted(bytes)) throw new InvalidRequest(`${item.path}.data: The PDF specified is password protected.`);
      pages += pdfPages(bytes) ?? 1;
      if (pages > MAX_PDF_PAGES) throw new InvalidRequest(`${item.path}.data: A maximum of ${MAX_PDF_PAGES} PDF pages may be provided.`);
      continue;
    }
    if (item.data.length > IMAGE_BASE64_BYTES) {
      throw new InvalidRequest(`${item.path}: image exceeds 5 MB maximum: ${item.data.length} bytes > ${IMAGE_BASE64_BYTES} bytes`);
    }
    const size = sizeOf(item);
    const side = size ? Math.max(size.width, size.height) : 0;
    if (side > MAX_SIDE_PX)
      throw new InvalidRequest(`${item.path}.data: At least one of the image dimensions exceed max allowed size: ${MAX_SIDE_PX} pixels`);
    if (images.length > MANY_IMAGES && side > MANY_SIDE_PX) {
      throw new InvalidRequest(
        `${item.path}.data: At least one of the image dimensions exceed max allowed size for many-image requests: ${MANY_SIDE_PX} pixels`,
      );
    }
  }
  if (images.length + pages > MAX_MEDIA)
    throw new InvalidRequest(`Too much media: ${pages} document pages + ${images.length} images > ${MAX_MEDIA}`);
}
