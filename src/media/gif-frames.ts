/**
 * The frames of a GIF, counted from its image descriptors, or null when its blocks cannot be
 * read. OpenAI takes only still GIFs (one frame); Anthropic reads the first frame of any.
 */
export function gifFrames(b: Uint8Array): number | null {
  if (b.length < 13) return null;
  let at = 13 + colorTable(b[10] ?? 0);
  let frames = 0;
  while (at < b.length) {
    const block = b[at];
    if (block === 0x3b) return frames;
    if (block === 0x21) {
      at = skipSubBlocks(b, at + 2);
    } else if (block === 0x2c) {
      frames += 1;
      // Descriptor (10 bytes with its introducer), local color table, LZW code size, data.
      at = skipSubBlocks(b, at + 10 + colorTable(b[at + 9] ?? 0) + 1);
    } else {
      return null;
    }
  }
  return frames;
}

/** Bytes of the color table a packed-fields byte announces. */
const colorTable = (packed: number) => ((packed & 0x80) !== 0 ? 3 * 2 ** ((packed & 0x07) + 1) : 0);

/** The offset after a chain of data sub-blocks (each a length byte and its data, ended by 0). */
function skipSubBlocks(b: Uint8Array, at: number): number {
  while (at < b.length) {
    const size = b[at] ?? 0;
    at += 1 + size;
    if (size === 0) return at;
  }
  return at;
}
