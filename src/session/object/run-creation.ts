import type { Agent, ObjectJsonSchema } from "../../agents";
import { newId, nowIso } from "../../core/ids";
import type { Message } from "../../core/messages";
import { runEventStream } from "../stream/events";
import type { RunAnswer, SessionIdentity } from "./protocol";
import { newRunRecord, type InputPart, type RunBase, type RunCaller } from "../run/run-record";
import { fail, type SessionCore } from "./session-core";

/** Everything a new run is made of: a plain turn, or a branch of an earlier run. */
export type NewRun = SessionIdentity & {
  agent: Agent;
  /** The user message the run adds; null for a branch that adds none. */
  input: InputPart[] | null;
  base: RunBase;
  parent_run_id: string | null;
  forked_from_checkpoint: string | null;
  metadata: Record<string, unknown>;
  stream: boolean;
  background: boolean;
  /** Chosen by the Worker for an `Idempotency-Key`: a retried POST finds the same run. */
  run_id?: string;
  /** Set on branches: emitted as `run_continued` after `run_started`. */
  continued_from?: { from_checkpoint: string | null };
  /** The run's own output schema (overrides the agent's); null or absent: the agent's. */
  output_schema?: ObjectJsonSchema | null;
  /** The Worker has just drawn the session's id: nobody knows it before the run's answer. */
  new_session?: boolean;
  /** A new session's history brought by the client, stored before the input (protocol.ts). */
  history?: Message[];
  /** The end user and prompt cache key of the run's calls. */
  caller?: RunCaller;
  /** Opaque to the session: what the API surface that started the run answers about it. */
  surface?: Record<string, unknown>;
};

/**
 * Records a new run and takes the session's turn for it. The caller has checked, with no
 * await since, that the session is free: the check and this write are one synchronous step.
 */
export async function createRun(core: SessionCore, spec: NewRun): Promise<RunAnswer> {
  const existing = spec.run_id ? core.store.getRun(spec.run_id) : null;
  if (existing) {
    // A retried request (same Idempotency-Key) is answered the run it created, its events from the start.
    const replay = spec.stream ? core.replayOf(spec, existing.id, 0) : null;
    const answer = await core.answer(existing.id, replay, !spec.background);
    return answer.ok ? { ...answer, replayed: true } : answer;
  }
  const owner = core.store.getMeta("agent_id");
  if (owner !== null && owner !== spec.agent.id) return fail("not_found", `Session ${spec.session_id} not found`);
  if (spec.history && spec.history.length > 0 && core.store.headRun()) {
    return fail("invalid_request", `Session ${spec.session_id} has a history already: a brought conversation starts a new session`);
  }
  const busy = core.busyFailure();
  if (busy) return busy;

  const now = nowIso();
  const run = newRunRecord({
    id: spec.run_id ?? newId("run"),
    agent: spec.agent,
    session_id: spec.session_id,
    status: spec.background ? "pending" : "running",
    input: spec.input ?? [],
    parent_run_id: spec.parent_run_id,
    forked_from_checkpoint: spec.forked_from_checkpoint,
    metadata: spec.metadata,
    created_at: now,
    started_at: spec.background ? null : now,
    output_schema: spec.output_schema ?? spec.agent.output_schema ?? null,
    base: spec.base,
  });
  if (spec.surface) run.surface = spec.surface;
  if (spec.caller) run.caller = spec.caller;
  if (spec.continued_from) run.continued_from = spec.continued_from;
  let stream: ReadableStream<Uint8Array> | null = null;
  await core.runs.launch(run.id, async () => {
    core.commit(() => {
      if (owner === null) {
        core.store.setMeta("agent_id", spec.agent.id);
        core.store.setMeta("created_at", now);
      }
      core.store.setMeta("active_run_id", run.id);
      core.store.setMeta("updated_at", now);
      const history = (spec.history ?? []).map((message) => core.appendMessage(run, message.role, message.content));
      const input = spec.input && spec.input.length > 0 ? [core.appendMessage(run, "user", spec.input)] : [];
      return [core.mirrorSessionRow(), ...history, ...input, ...core.saveRun(run)];
    });
    // Subscribed before the first await: a cancel during the flush below ends the stream too.
    if (spec.stream) stream = runEventStream(core.hub, run.id);
    if (spec.background) core.setTimer("queue_fallback", Date.now() + core.queueFallbackMs());
    // A running run is never without its watchdog: an object that dies while the row goes to D1 resumes it.
    else core.touch();
    // The run's row reaches D1 before anyone learns its id (GET …/runs/{id} finds it anywhere).
    // A synchronous turn on a new session shows neither id before its answer, and its finish
    // drains the mirror before that: its first model call does not wait for D1.
    const unseen = spec.new_session === true && !spec.stream && !spec.background;
    if (!unseen) await core.flush();
    if (spec.background) await core.enqueue(run);
  });
  if (!spec.background && core.store.runStatus(run.id) === "running") void core.begin(run, "request");
  return core.answer(run.id, stream, !spec.background);
}
