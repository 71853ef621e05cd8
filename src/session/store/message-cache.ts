import type { StoredMessage } from "./session-store";

/**
 * The session's messages as parsed objects, kept between steps: messages are append-only, so a
 * step reads and parses only those added since the last read, and a branch resolves without
 * parsing the whole session again. The cached messages are frozen (a caller that changed one
 * would change every later read). The cache trusts storage, not itself: each read checks the
 * highest stored index, and a lower one (a rolled-back transaction, a wiped storage) drops it.
 */
export class MessageCache {
  private messages: StoredMessage[] = [];
  private lastIndex = -1;

  /**
   * Every message in index order. `highest` is the highest stored index (-1 for none);
   * `readAfter(index)` reads and parses the stored messages above `index`.
   */
  all(highest: number, readAfter: (index: number) => StoredMessage[]): readonly StoredMessage[] {
    if (highest < this.lastIndex) this.reset();
    if (highest > this.lastIndex) {
      for (const message of readAfter(this.lastIndex)) this.messages.push(freeze(message));
      this.lastIndex = this.messages.at(-1)?.index ?? -1;
    }
    return this.messages;
  }

  reset(): void {
    this.messages = [];
    this.lastIndex = -1;
  }
}

function freeze(message: StoredMessage): StoredMessage {
  for (const block of message.content) Object.freeze(block);
  Object.freeze(message.content);
  return Object.freeze(message);
}
