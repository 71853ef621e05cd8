/**
 * What the object keeps: its SQLite ledger (session-store.ts), the stored event log, the
 * statements that mirror it to D1 through the outbox, and the rebuild of an empty object from D1.
 */
export { SessionStore, type MirrorStatement, type StoredMessage } from "./session-store";
export { rebuildFromMirror } from "./rebuild";
