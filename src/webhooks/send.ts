import { checkOutboundUrl, isRedirect } from "../core/url-guard";
import type { DeliveryRow } from "../db/webhooks";
import { signedHeaders } from "./signature";

/** What one attempt came to: `ok` only for a 2xx answer; `status_code` the receiver's answer, if any. */
export type AttemptOutcome = { ok: boolean; status_code: number | null; outcome: string };

/**
 * The body of a delivery, the same bytes on every attempt (docs/webhooks.md): the event's type
 * and time, and the run it is about.
 */
export const payloadOf = (delivery: DeliveryRow): string =>
  JSON.stringify({
    type: delivery.eventType,
    timestamp: delivery.eventAt,
    data: { run_id: delivery.runId, session_id: delivery.sessionId, agent_id: delivery.agentId, status: delivery.runStatus },
  });

/**
 * One signed attempt of a delivery to `url`. The URL is checked by the outbound fence again (the
 * rule or the environment may have changed since the webhook was made); a redirect is never
 * followed and, like a non-2xx answer, a refused URL or no answer within `timeoutMs`, fails the attempt.
 */
export async function attemptDelivery(
  delivery: DeliveryRow,
  target: { url: string; secret: string },
  options: { environment: string | undefined; timeoutMs: number },
): Promise<AttemptOutcome> {
  const refused = checkOutboundUrl(target.url, options.environment);
  if (refused) return { ok: false, status_code: null, outcome: `url refused: ${refused}` };
  const body = payloadOf(delivery);
  const headers = await signedHeaders(target.secret, delivery.id, Math.floor(Date.now() / 1000), body);
  try {
    const response = await fetch(target.url, {
      method: "POST",
      headers: { "content-type": "application/json", "user-agent": "Agentry-Webhooks/1", ...headers },
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    await response.body?.cancel();
    if (isRedirect(response.status)) return { ok: false, status_code: response.status, outcome: "redirect (not followed)" };
    return { ok: response.ok, status_code: response.status, outcome: response.ok ? "delivered" : `answered ${response.status}` };
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError");
    return { ok: false, status_code: null, outcome: timedOut ? `timed out after ${options.timeoutMs} ms` : "failed to connect" };
  }
}
