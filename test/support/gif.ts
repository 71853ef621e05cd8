import { toBase64 } from "./media";

/** A 1×1 GIF of `frames` frames (more than one: animated), base64. */
export function gifOfFrames(frames: number): string {
  const header = [0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 1, 0, 1, 0, 0x80, 0, 0, 0, 0, 0, 255, 255, 255];
  const frame = [0x21, 0xf9, 4, 0, 10, 0, 0, 0, 0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x44, 0x01, 0];
  return toBase64(new Uint8Array([...header, ...Array.from({ length: frames }, () => frame).flat(), 0x3b]));
}
