import type { Message } from "../core/messages";

/** A transcript message as the session stores it: its place in the session, its run and when it was written. */
export type StoredMessage = Message & { index: number; run_id: string; created_at: string };
