import type { StoredMessage } from "../../run-model/stored-message";

/**
 * Characters of stored message JSON one object keeps parsed. Objects share their isolate's memory
 * (128 MB on Cloudflare), so a session larger than this is parsed on each read, as before the
 * cache; compaction keeps sessions below it.
 */
export const MAX_CACHED_CHARS = 8_000_000;

/** A message as read from storage, with the length of its stored JSON. */
export type ReadMessage = { message: StoredMessage; chars: number };

/**
 * The session's messages as parsed objects, kept between steps: messages are append-only (never
 * rewritten or deleted but with the whole storage), so a step reads and parses only those added
 * since the last read, and a branch resolves without parsing the whole session again. The cached
 * messages are frozen (a caller that changed one would change every later read). The cache trusts
 * storage, not itself: each read checks the highest stored index, and a lower one (a rolled-back
 * transaction, a wiped storage) drops it.
 */
export class MessageCache {
  private messages: StoredMessage[] = [];
  private lastIndex = -1;
  private chars = 0;

  constructor(private readonly maxChars: number = MAX_CACHED_CHARS) {}

  /**
   * Every message in index order. `highest` is the highest stored index (-1 for none);
   * `readAfter(index)` reads and parses the stored messages above `index`.
   */
  all(highest: number, readAfter: (index: number) => ReadMessage[]): readonly StoredMessage[] {
    if (highest < this.lastIndex) this.reset();
    if (highest > this.lastIndex) {
      const fresh = readAfter(this.lastIndex);
      this.chars += fresh.reduce((n, r) => n + r.chars, 0);
      if (this.chars > this.maxChars) {
        // Too large to keep: this read parses the rest and nothing is kept.
        const all = [...this.messages, ...fresh.map((r) => r.message)];
        this.reset();
        return all;
      }
      for (const { message } of fresh) this.messages.push(freeze(message));
      this.lastIndex = this.messages.at(-1)?.index ?? -1;
    }
    return this.messages;
  }

  reset(): void {
    this.messages = [];
    this.lastIndex = -1;
    this.chars = 0;
  }
}

function freeze(message: StoredMessage): StoredMessage {
  for (const block of message.content) Object.freeze(block);
  Object.freeze(message.content);
  return Object.freeze(message);
}
