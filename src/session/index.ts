/**
 * One session, one Durable Object (docs/architecture.md). The folders:
 * - object/     the Durable Object: RPC surface, run transitions, timers
 * - run/        a run's record and the agent loop
 * - transcript/ the branch a run sees, model history, compaction
 * - store/      the object's SQLite, the event log, the D1 mirror and rebuild
 * - stream/     events to clients: hub, SSE, WebSockets
 * The rest of the app imports from here.
 */
export * from "./object";
export * from "./run";
export * from "./stream";
