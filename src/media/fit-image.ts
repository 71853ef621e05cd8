import { invalidFields } from "../core/errors";
import { imageSize } from "./image-size";
import { formatMb, IMAGE_LIMIT_TEXT, MANY_IMAGES_SIDE_PX, MAX_IMAGE_BYTES, MAX_IMAGE_SIDE_PX, type ImageType } from "./limits";
import { tooLarge } from "./parse-input";

/** An image's bytes with what was measured of them. */
export type ImageBytes = { type: "image"; media_type: ImageType; bytes: Uint8Array; width?: number; height?: number };

/**
 * The longest side an image is scaled to with the Images binding: every image then fits a
 * request of more than 20 images (Anthropic's many-image limit), and loses little, since the
 * models read images at most 1568–2576 px (Claude) or 2048 px (OpenAI's high detail) on a side.
 */
export const FITTED_SIDE_PX = MANY_IMAGES_SIDE_PX;

/** Whether an image is over a vendor limit: it must be scaled down, or refused without the binding. */
export const overHardLimit = (image: ImageBytes) =>
  image.bytes.byteLength > MAX_IMAGE_BYTES || Math.max(image.width ?? 0, image.height ?? 0) > MAX_IMAGE_SIDE_PX;

/** Whether the Images binding should scale an image down before it is stored. */
export const worthFitting = (image: ImageBytes) => overHardLimit(image) || Math.max(image.width ?? 0, image.height ?? 0) > FITTED_SIDE_PX;

/** Encodings tried in turn, until the result fits MAX_IMAGE_BYTES: the image's own format (a GIF as PNG), then WebP. */
const attempts = (type: ImageType) =>
  [
    { side: FITTED_SIDE_PX, format: type === "image/gif" ? ("image/png" as const) : type },
    { side: FITTED_SIDE_PX, format: "image/webp" as const, quality: 85 },
    { side: Math.round(FITTED_SIDE_PX * 0.7), format: "image/webp" as const, quality: 80 },
  ] as const;

/**
 * Scales an image down with Cloudflare's Images binding to at most FITTED_SIDE_PX on a side
 * and MAX_IMAGE_BYTES, before it is stored. An image over a vendor limit that cannot be scaled
 * (the binding cannot read it, or no encoding fits) is refused naming `path`; one within the
 * limits is kept as it is.
 */
export async function fitImage(images: ImagesBinding, image: ImageBytes, path: string): Promise<ImageBytes> {
  for (const attempt of attempts(image.media_type)) {
    let bytes: Uint8Array;
    try {
      const stream = new Blob([image.bytes]).stream();
      const transformer = images.input(stream).transform({ width: attempt.side, height: attempt.side, fit: "scale-down" });
      const result = await transformer.output({ format: attempt.format, ...("quality" in attempt ? { quality: attempt.quality } : {}) });
      bytes = new Uint8Array(await new Response(result.image()).arrayBuffer());
    } catch {
      if (!overHardLimit(image)) return image;
      const size = image.width !== undefined ? `is ${image.width}×${image.height} px` : `is ${image.bytes.byteLength} bytes`;
      throw invalidFields([
        {
          path,
          message: `${size}, over the vendors' limits (${MAX_IMAGE_SIDE_PX} px on a side, ${IMAGE_LIMIT_TEXT}), and could not be read to scale it down`,
        },
      ]);
    }
    if (bytes.byteLength <= MAX_IMAGE_BYTES)
      return { type: "image", media_type: attempt.format, bytes, ...imageSize(attempt.format, bytes) };
  }
  if (!overHardLimit(image)) return image;
  throw tooLarge(
    path,
    `The image is still over ${formatMb(MAX_IMAGE_BYTES)} scaled down to ${attempts(image.media_type).at(-1)?.side} px; images are limited to ${IMAGE_LIMIT_TEXT}`,
  );
}
