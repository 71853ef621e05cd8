import { Webhook } from "standardwebhooks";

/** What the receiver saw of one webhook call. */
export type ReceivedWebhook = {
  webhook_id: string | null;
  webhook_timestamp: string | null;
  /** `new Webhook(secret).verify(body, headers)` passed, exactly as a receiver checks it. */
  verified: boolean;
  payload: unknown;
  answered: number | "hung";
};

/**
 * A Standard Webhooks receiver for the lifecycle webhook tests. Each test uses its own `bucket`:
 *   POST /hook-secret/<bucket>   → the bucket's signing secret (the body, `whsec_…`), given after the webhook is made
 *   POST /hook/<bucket>?fail=N   → verifies and records the call; the first N calls answer 500, later ones 200
 *   POST /hook/<bucket>?mode=redirect → 302 to /hook/<bucket>-redirected (a followed redirect would be recorded there)
 *   POST /hook/<bucket>?mode=hang     → never answers (until the caller hangs up)
 *   GET  /hooks/<bucket>?count=N → the calls recorded, once there are at least N
 */
export function webhookReceiver() {
  const secrets = new Map<string, string>();
  const received = new Map<string, ReceivedWebhook[]>();
  let readers: (() => void)[] = [];
  return async (request: Request, action: string, bucket: string, url: URL): Promise<Response> => {
    if (action === "hook-secret") {
      secrets.set(bucket, await request.text());
      return new Response("ok");
    }
    if (action === "hooks") {
      const count = Number(url.searchParams.get("count") ?? "0");
      while ((received.get(bucket)?.length ?? 0) < count) await new Promise<void>((resolve) => readers.push(resolve));
      return Response.json(received.get(bucket) ?? []);
    }
    const raw = await request.text();
    const headers = Object.fromEntries(request.headers);
    const secret = secrets.get(bucket);
    let verified = false;
    let payload: unknown = raw;
    try {
      if (secret) {
        payload = new Webhook(secret).verify(raw, headers);
        verified = true;
      }
    } catch {
      verified = false;
    }
    const list = received.get(bucket) ?? [];
    const fail = Number(url.searchParams.get("fail") ?? "0");
    const mode = url.searchParams.get("mode");
    const answered = mode === "hang" ? "hung" : mode === "redirect" ? 302 : list.length < fail ? 500 : 200;
    list.push({
      webhook_id: headers["webhook-id"] ?? null,
      webhook_timestamp: headers["webhook-timestamp"] ?? null,
      verified,
      payload,
      answered,
    });
    received.set(bucket, list);
    const waiting = readers;
    readers = [];
    for (const wake of waiting) wake();
    if (answered === "hung") {
      await new Promise<void>((resolve) => request.signal.addEventListener("abort", () => resolve()));
      return new Response("too late");
    }
    if (answered === 302)
      return new Response(null, { status: 302, headers: { location: new URL(`/hook/${bucket}-redirected`, url).toString() } });
    return new Response(answered === 200 ? "thanks" : "receiver failed", { status: answered });
  };
}
