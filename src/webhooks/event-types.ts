/**
 * The lifecycle events a webhook may ask for (docs/webhooks.md), and which of them a run's event
 * makes. Pure: the session object calls `webhookEventsOf` for each event it stores.
 */
export const RUN_WEBHOOK_EVENTS = ["run.completed", "run.failed", "run.cancelled", "run.paused", "run.queued"] as const;
/** OpenAI's names, for runs made through `/v1/responses` only. */
export const RESPONSE_WEBHOOK_EVENTS = ["response.completed", "response.failed", "response.cancelled", "response.incomplete"] as const;
export const WEBHOOK_EVENT_TYPES = [...RUN_WEBHOOK_EVENTS, ...RESPONSE_WEBHOOK_EVENTS] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** One webhook event a run's event makes: its type and the `status` its payload reports. */
export type WebhookEvent = { type: WebhookEventType; status: string };

/** The run event types that make webhook events (`webhookEventsOf` answers none for any other). */
const RUN_EVENTS: Record<string, { run: WebhookEventType; status: string } | undefined> = {
  run_completed: { run: "run.completed", status: "completed" },
  run_error: { run: "run.failed", status: "error" },
  run_cancelled: { run: "run.cancelled", status: "cancelled" },
  run_paused: { run: "run.paused", status: "paused" },
  run_queued: { run: "run.queued", status: "queued" },
};

/** The `error.type` of a run cut by its own output limit: OpenAI calls that response `incomplete`. */
const TRUNCATED = "output_truncated";

const errorTypeOf = (data: unknown): unknown =>
  typeof data === "object" &&
  data !== null &&
  "error" in data &&
  typeof data.error === "object" &&
  data.error !== null &&
  "type" in data.error
    ? data.error.type
    : null;

/**
 * The webhook events of a stored run event: its `run.*` event and, for a run made through
 * `/v1/responses` (`fromResponses`), OpenAI's `response.*` event with the Response's status (a
 * run paused on client tools is a completed response that ends with function calls, as
 * `GET /v1/responses/{id}` shows it).
 */
export function webhookEventsOf(eventType: string, data: unknown, fromResponses: boolean): WebhookEvent[] {
  const made = RUN_EVENTS[eventType];
  if (!made) return [];
  const events: WebhookEvent[] = [{ type: made.run, status: made.status }];
  if (!fromResponses) return events;
  switch (eventType) {
    case "run_completed":
    case "run_paused":
      events.push({ type: "response.completed", status: "completed" });
      break;
    case "run_cancelled":
      events.push({ type: "response.cancelled", status: "cancelled" });
      break;
    case "run_error":
      events.push(
        errorTypeOf(data) === TRUNCATED
          ? { type: "response.incomplete", status: "incomplete" }
          : { type: "response.failed", status: "failed" },
      );
      break;
  }
  return events;
}
