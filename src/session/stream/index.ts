/**
 * Events to clients: the event types and the in-memory hub, SSE framing and replay, and the
 * session's hibernatable WebSockets.
 */
export { isTerminal, type EventData, type RunEvent, type RunEventType } from "./events";
export {
  EVENT_CATALOGUE,
  metricsSchema,
  runErrorSchema,
  runEventSchema,
  requiredActionSchema,
  TERMINAL_EVENT_TYPES,
} from "./event-catalogue";
export { upgradeRequest } from "./sockets";
