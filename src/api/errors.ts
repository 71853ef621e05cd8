/** API.md's error answers live in core/errors.ts (db/, media/ and session/ use them too); the api layer imports them from here. */
export * from "../core/errors";
