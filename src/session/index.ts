/**
 * One session, one Durable Object (docs/architecture.md). The folders:
 * - object/     the Durable Object: RPC surface, a run's life (run-lifecycle.ts), timers
 * - run/        the agent loop that drives a run (its record is in src/run-model, handed on from here)
 * - transcript/ the branch a run sees, model history, compaction
 * - store/      the object's SQLite, the event log, the D1 mirror and rebuild
 * - stream/     events to clients: hub, SSE, WebSockets
 * - client.ts   how the Worker calls a session's object
 * The rest of the app imports from here.
 */
export * from "./object";
export * from "../run-model";
export * from "./stream";
