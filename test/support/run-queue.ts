import { createExecutionContext, createMessageBatch, getQueueResult, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import worker from "../../src/index";
import type { Env } from "../../src/env";
import type { RunLifecycle } from "../../src/session/object/run-lifecycle";
import type { RunMessage } from "../../src/run-model/run-message";

export type { RunMessage };

import { sessionStub } from "./held-d1";

export { sessionStub };

/**
 * Waits until the session's object has nothing left to copy to D1 from the runs it drives: every
 * driver settled, and the mirror's drain they started done. A condition of the object, not a time.
 */
export async function mirrorCaughtUp(sessionId: string, tenant = "default"): Promise<void> {
  await runInDurableObject(sessionStub(sessionId, tenant), (instance) => (instance as unknown as { life: RunLifecycle }).life.quiesced());
}

/**
 * Keeps a session's background-run messages away from the real test queue, whose consumer would
 * otherwise race the test: the live object instance of the session gets a RUNS binding that only
 * records what it sends (every other binding stays the real one). Call it before the session's
 * first background run; deliver the recorded messages with `deliverRunMessages`. The swap lives
 * as long as that instance: a test that evicts or resets the object gets the real queue back.
 */
export async function holdRunQueue(sessionId: string, tenant = "default"): Promise<RunMessage[]> {
  const sent: RunMessage[] = [];
  const recording = {
    send: async (message: RunMessage) => {
      sent.push(message);
    },
    sendBatch: async (messages: Iterable<MessageSendRequest<RunMessage>>) => {
      for (const message of messages) sent.push(message.body);
    },
  };
  await runInDurableObject(sessionStub(sessionId, tenant), (instance) => {
    // SessionObject keeps its bindings on its private core (session-core.ts); `env` is a plain property there.
    const core = (instance as unknown as { core: { env: Env } }).core;
    core.env = Object.create(core.env, { RUNS: { value: recording } }) as Env;
  });
  return sent;
}

/**
 * Delivers `bodies` to the Worker's queue handler as one batch of `queue` (attempt 1 each,
 * ids `m1`, `m2`, …) and waits until the handler and everything it left running are done.
 */
export async function deliverRunMessages(bodies: unknown[], queue = "agentry-runs") {
  const batch = createMessageBatch(
    queue,
    bodies.map((body, i) => ({ id: `m${i + 1}`, timestamp: new Date(), attempts: 1, body })),
  );
  const ctx = createExecutionContext();
  await worker.queue(batch, env);
  return getQueueResult(batch, ctx);
}
