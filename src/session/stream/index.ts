/**
 * Events to clients: the event types and the in-memory hub, SSE framing and replay, and the
 * session's hibernatable WebSockets.
 */
export { isTerminal, type RunEvent, type RunEventType } from "./events";
export { upgradeRequest } from "./sockets";
