import { isGoingOn, renderRun } from "../../run-model/run-record";
import type { RunAnswer } from "../../run-model/session-protocol";
import { type EventHub, isTerminal } from "../stream/events";
import type { SessionStore } from "../store/session-store";
import { fail } from "./session-core";

/**
 * Resolves when the run's current stretch ends (its terminal event), or after `timeoutMs`;
 * either way it stops listening. Call it synchronously after reading the run as unfinished: the
 * terminal event follows the stored status, so it cannot be missed.
 */
export function stretchEnd(hub: EventHub, runId: string, timeoutMs?: number): Promise<void> {
  return new Promise((resolve) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const unsubscribe = hub.subscribe(
      (event) => {
        if (event.run_id === runId && isTerminal(event.type)) done();
      },
      { internal: true },
    );
    const done = () => {
      clearTimeout(timer);
      unsubscribe();
      resolve();
    };
    if (timeoutMs !== undefined) timer = setTimeout(done, timeoutMs);
  });
}

/** The answer to a start or a continue: the stream, or (`waitForStop`) the run once it has stopped. */
export async function answerRun(
  store: SessionStore,
  hub: EventHub,
  runId: string,
  stream: ReadableStream<Uint8Array> | null,
  waitForStop = true,
): Promise<RunAnswer> {
  const current = store.getRun(runId);
  if (!current) return fail("not_found", `Run ${runId} not found`);
  if (stream || !waitForStop) return { ok: true, run: renderRun(current), stream };
  if (isGoingOn(current.status)) await stretchEnd(hub, runId);
  try {
    return { ok: true, run: renderRun(store.getRun(runId) ?? current), stream: null };
  } catch {
    return fail("not_found", `Run ${runId} not found: its session was deleted`);
  }
}
