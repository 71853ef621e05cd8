import { toHex } from "../core/hash";
import { checkOutboundUrl, isRedirect } from "../core/url-guard";
import { CANCELLED, capOutput, MAX_TOOL_OUTPUT_BYTES, readCapped, toolError, type ToolOutcome } from "./outcome";

export type WebhookCall = {
  url: string;
  timeout_ms: number;
  tool_call_id: string;
  name: string;
  arguments: unknown;
  run_id: string;
  session_id: string;
};

async function hmacHex(secret: string, message: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(message));
  return toHex(mac);
}

/**
 * POSTs a tool call to its webhook, signed (docs/api.md, Tools). A non-2xx answer or a timeout is a
 * tool error the model sees. `Idempotency-Key` lets the receiver drop the one possible re-send.
 * Redirects are not followed: the signed call goes to the checked URL and nowhere else.
 * `signal` (the run's) aborts the call when the run is cancelled.
 */
export async function callWebhook(
  call: WebhookCall,
  secret: string | undefined,
  environment: string | undefined,
  signal: AbortSignal,
): Promise<ToolOutcome> {
  const refused = checkOutboundUrl(call.url, environment);
  if (refused) return toolError(`Webhook URL refused: ${refused}`);
  if (!secret) return toolError("Webhook tools need the WEBHOOK_SECRET secret, which is not configured");
  const body = JSON.stringify({
    tool_call_id: call.tool_call_id,
    name: call.name,
    arguments: call.arguments,
    run_id: call.run_id,
    session_id: call.session_id,
  });
  const timestamp = Math.floor(Date.now() / 1000).toString();
  try {
    const response = await fetch(call.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-agentry-timestamp": timestamp,
        "x-agentry-signature": `sha256=${await hmacHex(secret, `${timestamp}.${body}`)}`,
        "idempotency-key": call.tool_call_id,
      },
      body,
      redirect: "manual",
      signal: AbortSignal.any([signal, AbortSignal.timeout(call.timeout_ms)]),
    });
    if (isRedirect(response.status)) {
      await response.body?.cancel();
      return toolError(`The webhook answered a redirect (status ${response.status}); redirects are not followed`);
    }
    const { text, over } = await readCapped(response);
    if (!response.ok) return toolError(capOutput(`Webhook answered HTTP ${response.status}: ${text}`));
    if (over) return toolError(`Webhook answer is over ${MAX_TOOL_OUTPUT_BYTES} bytes, the limit of a tool output`);
    return { output: text, is_error: false };
  } catch (error) {
    if (signal.aborted) return toolError(CANCELLED);
    const timedOut = error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError");
    return toolError(timedOut ? `Webhook timed out after ${call.timeout_ms} ms` : "Webhook request failed to connect");
  }
}
