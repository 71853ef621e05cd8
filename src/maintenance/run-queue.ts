import { errorMessage } from "../core/errors";
import { callSession } from "../session/client";
import { log } from "../core/log";
import type { Env } from "../env";
import { runMessageSchema } from "../run-model";

export const RUNS_DEAD_LETTER_QUEUE = "agentry-runs-dlq";

/**
 * The consumer of background runs. Every message is acked or retried explicitly; the object
 * is idempotent by run id, so a redelivered or duplicated message starts nothing twice.
 */
export async function consumeRuns(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const deadLetters = batch.queue === RUNS_DEAD_LETTER_QUEUE;
  for (const message of batch.messages) {
    const parsed = runMessageSchema.safeParse(message.body);
    if (!parsed.success) {
      log({ event: "queue_message", run_id: null, outcome: "malformed message dropped" });
      message.ack();
      continue;
    }
    const { tenant, session_id, run_id } = parsed.data;
    try {
      const identity = { tenant, session_id };
      const result: { ok: boolean } = await callSession(
        env,
        tenant,
        session_id,
        (session): Promise<{ ok: boolean }> =>
          deadLetters
            ? session.failPendingRun(identity, run_id, "The run's queue message was dead-lettered after repeated delivery failures")
            : session.executeRun(identity, run_id),
        { idempotent: true },
      );
      log({ event: "queue_message", run_id, outcome: result.ok ? (deadLetters ? "dead letter handled" : "delivered") : "run not found" });
      message.ack();
    } catch (error) {
      log({ event: "queue_message", run_id, outcome: `retry: ${errorMessage(error)}` });
      message.retry({ delaySeconds: Math.min(60, 2 ** message.attempts) });
    }
  }
}
