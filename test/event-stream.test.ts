import { describe, expect, it } from "vitest";
import { replayStream } from "../src/session/stream/replay-stream";
import { EventHub, type RunEvent, type RunEventType } from "../src/session/stream/events";
import { SseReader } from "./support/events";

const event = (seq: number, type: RunEventType = "content_delta", runId = "run_a"): RunEvent => ({
  seq,
  type,
  run_id: runId,
  session_id: "ses_x",
  created_at: "2026-12-02T00:00:00.000Z",
  data: { text: String(seq) },
});

/** A stored log whose first read is held open while the test publishes live events. */
function heldLog(pages: RunEvent[][]) {
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  let reads = 0;
  const read = async (after: number) => {
    if (reads++ === 0) await held;
    return (pages.shift() ?? []).filter((e) => e.seq > after);
  };
  return { read, release: () => release() };
}

const seqsOf = async (stream: ReadableStream<Uint8Array>) => (await new SseReader(new Response(stream)).rest()).map((e) => [e.seq, e.type]);

describe("replayStream", () => {
  it("sends events emitted during the replay once, in order, and closes at the stretch's terminal event", async () => {
    const hub = new EventHub();
    const log = heldLog([[event(1), event(2), event(3)]]);
    const stream = replayStream({ hub, runId: "run_a", after: 0, read: log.read, isLive: () => true });
    // Emitted while the stored events are being read: 3 is also in the read, 4 is not.
    hub.publish(event(3));
    hub.publish(event(4));
    hub.publish(event(9, "content_delta", "run_other"));
    log.release();
    const reader = new SseReader(new Response(stream));
    const replayed = await reader.take(4);
    hub.publish(event(5));
    hub.publish(event(6, "run_completed"));
    hub.publish(event(7));
    expect([...replayed, ...(await reader.rest())].map((e) => [e.seq, e.type])).toEqual([
      [1, "content_delta"],
      [2, "content_delta"],
      [3, "content_delta"],
      [4, "content_delta"],
      [5, "content_delta"],
      [6, "run_completed"],
    ]);
  });

  it("stops at a terminal event emitted during the replay, even when the read returned more", async () => {
    const hub = new EventHub();
    const log = heldLog([[event(1), event(2, "run_paused"), event(3, "run_continued"), event(4)]]);
    const stream = replayStream({ hub, runId: "run_a", after: 0, read: log.read, isLive: () => true });
    hub.publish(event(2, "run_paused"));
    hub.publish(event(3, "run_continued"));
    hub.publish(event(4));
    log.release();
    expect(await seqsOf(stream)).toEqual([
      [1, "content_delta"],
      [2, "run_paused"],
    ]);
  });

  it("does not close on an earlier stretch's terminal event in the replay while the run is live", async () => {
    const hub = new EventHub();
    const log = heldLog([[event(1), event(2, "run_paused"), event(3, "run_continued")]]);
    const stream = replayStream({ hub, runId: "run_a", after: 1, read: log.read, isLive: () => true });
    log.release();
    const reader = new SseReader(new Response(stream));
    const replayed = await reader.take(2);
    hub.publish(event(4, "run_completed"));
    expect([...replayed, ...(await reader.rest())].map((e) => [e.seq, e.type])).toEqual([
      [2, "run_paused"],
      [3, "run_continued"],
      [4, "run_completed"],
    ]);
  });

  it("closes after the replay when the stretch had ended, and follows one that begins meanwhile", async () => {
    const ended = heldLog([[event(1), event(2, "run_completed")]]);
    const closed = replayStream({ hub: new EventHub(), runId: "run_a", after: 0, read: ended.read, isLive: () => false });
    ended.release();
    expect(await seqsOf(closed)).toEqual([
      [1, "content_delta"],
      [2, "run_completed"],
    ]);

    const hub = new EventHub();
    const paused = heldLog([[event(1, "run_paused")]]);
    const resumed = replayStream({ hub, runId: "run_a", after: 0, read: paused.read, isLive: () => false });
    hub.publish(event(2, "run_continued"));
    paused.release();
    const reader = new SseReader(new Response(resumed));
    const replayed = await reader.take(2);
    hub.publish(event(3, "run_completed"));
    expect([...replayed, ...(await reader.rest())].map((e) => [e.seq, e.type])).toEqual([
      [1, "run_paused"],
      [2, "run_continued"],
      [3, "run_completed"],
    ]);
  });

  it("unsubscribes when the reader goes away", async () => {
    const hub = new EventHub();
    const log = heldLog([]);
    const stream = replayStream({ hub, runId: "run_a", after: 0, read: log.read, isLive: () => true });
    log.release();
    const reader = new SseReader(new Response(stream));
    hub.publish(event(1));
    expect((await reader.next())?.seq).toBe(1);
    await reader.cancel();
    expect(hub.size).toBe(1);
    hub.publish(event(2));
    // The failed write closes the sink, which removes its subscriber.
    const deadline = Date.now() + 5_000;
    while (hub.size > 0 && Date.now() < deadline) await scheduler.wait(1);
    expect(hub.size).toBe(0);
  });
});
