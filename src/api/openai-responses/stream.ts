import { isTerminal, type Run, type RunEvent } from "../../session";
import { renderResponse } from "./render";
import type { ResponseSurface } from "./surface";
import { functionCallItem, ServerToolCalls, type ServerToolItem } from "./tool-items";

type ResponsesEvent = { type: string; [field: string]: unknown };

const encoder = new TextEncoder();

/** Agentry's SSE frames (`data: <envelope>`) as events; keep-alive comments are skipped. */
export async function* runEventsOf(stream: ReadableStream<Uint8Array>): AsyncGenerator<RunEvent> {
  const decoder = new TextDecoder();
  let text = "";
  for await (const chunk of stream) {
    text += decoder.decode(chunk, { stream: true });
    for (let end = text.indexOf("\n\n"); end >= 0; end = text.indexOf("\n\n")) {
      const frame = text.slice(0, end);
      text = text.slice(end + 2);
      const data = frame.split("\n").find((line) => line.startsWith("data: "));
      if (data) yield JSON.parse(data.slice(6)) as RunEvent;
    }
  }
}

type ToolItem = ReturnType<typeof functionCallItem>;
/** A Responses event and the stretch of the run it belongs to (0: up to the first pause; each `run_continued` starts the next). */
export type StretchEvent = { stretch: number; event: ResponsesEvent };

const FINAL_TYPES = new Set(["response.completed", "response.failed", "response.incomplete"]);

/** A function call as its output item events: added (no arguments yet), its arguments at once, done. */
function* functionCallEvents(item: ToolItem, output_index: number): Generator<ResponsesEvent> {
  yield { type: "response.output_item.added", output_index, item: { ...item, arguments: "", status: "in_progress" } };
  yield { type: "response.function_call_arguments.delta", item_id: item.id, output_index, delta: item.arguments };
  yield { type: "response.function_call_arguments.done", item_id: item.id, output_index, name: item.name, arguments: item.arguments };
  yield { type: "response.output_item.done", output_index, item };
}

/**
 * The final response of a stretch that ended in `run_paused`, from that event: its client calls
 * (as the pause asked for them, even when the run has since gone on) after its server tool items.
 */
function pausedResponse(run: Run, surface: ResponseSurface, event: RunEvent, serverItems: ServerToolItem[], calls: ToolItem[]) {
  const response = renderResponse(run, surface, serverItems);
  const completed_at = Math.floor(Date.parse(event.created_at) / 1000);
  return {
    ...response,
    status: "completed" as const,
    error: null,
    incomplete_details: null,
    completed_at,
    output: [...serverItems, ...calls],
  };
}

/**
 * Translates one run's events, from its first, into the Responses stream events, in an order
 * that depends only on those events: the same run always gives the same `sequence_number`s, so a
 * client resumes with `starting_after`. Each stretch of the run (a pause on client tools ends
 * one; continuing it starts the next) reads as its own response stream, from
 * `response.created` to its final event, numbered on from the stretch before. `finalRun` reads
 * the run once a stretch has ended.
 */
export async function* responsesEventsOf(
  events: AsyncIterable<RunEvent>,
  startingRun: Run,
  surface: ResponseSurface,
  finalRun: () => Promise<Run>,
): AsyncGenerator<StretchEvent> {
  let stretch = 0;
  for await (const event of translate(events, startingRun, surface, finalRun, () => (stretch += 1))) yield { stretch, event };
}

async function* translate(
  events: AsyncIterable<RunEvent>,
  startingRun: Run,
  surface: ResponseSurface,
  finalRun: () => Promise<Run>,
  nextStretch: () => void,
): AsyncGenerator<ResponsesEvent> {
  const snapshot = () => ({
    ...renderResponse(startingRun, surface),
    status: "in_progress" as const,
    output: [],
    completed_at: null,
    error: null,
    incomplete_details: null,
  });
  const begin = function* (): Generator<ResponsesEvent> {
    yield { type: "response.created", response: snapshot() };
    yield { type: "response.in_progress", response: snapshot() };
  };
  yield* begin();
  let outputIndex = 0;
  // An open message is announced (its item added) at its first non-whitespace text: a message of
  // whitespace alone (Claude streams "\n\n" ahead of a tool call) is not in the final output, so
  // it is not in the stream either, and `output_index` names the same items in both.
  let open: { id: string; text: string; announced: boolean } | null = null;
  const tools = new ServerToolCalls();
  /** Ends the open message: `incomplete` when a retry or an output repair voided its text. */
  const close = function* (status: "completed" | "incomplete" = "completed"): Generator<ResponsesEvent> {
    if (!open) return;
    const { id, text, announced } = open;
    open = null;
    if (!announced) return;
    const part = { type: "output_text", text, annotations: [], logprobs: [] };
    yield { type: "response.output_text.done", item_id: id, output_index: outputIndex, content_index: 0, text, logprobs: [] };
    yield { type: "response.content_part.done", item_id: id, output_index: outputIndex, content_index: 0, part };
    yield {
      type: "response.output_item.done",
      output_index: outputIndex,
      item: { type: "message", id, status, role: "assistant", content: [part] },
    };
    outputIndex += 1;
  };
  for await (const event of events) {
    const serverCall = tools.add(event);
    if (event.type === "run_continued") {
      nextStretch();
      outputIndex = 0;
      yield* begin();
    } else if (event.type === "model_request_started") {
      // The text of an earlier step is not the final answer's.
      yield* close();
    } else if (event.type === "retry" || event.type === "output_repair") {
      // The attempt's text is void: the next attempt streams the answer again.
      yield* close("incomplete");
    } else if (serverCall) {
      yield* close();
      const [call, output] = tools.items.slice(-2) as [ToolItem, ServerToolItem];
      yield* functionCallEvents(call, outputIndex);
      outputIndex += 1;
      yield { type: "response.output_item.added", output_index: outputIndex, item: output };
      yield { type: "response.output_item.done", output_index: outputIndex, item: output };
      outputIndex += 1;
    } else if (event.type === "content_delta") {
      const delta = String(event.data.text ?? "");
      open ??= { id: `msg_${event.run_id}_${event.seq}`, text: "", announced: false };
      open.text += delta;
      if (open.announced) {
        yield { type: "response.output_text.delta", item_id: open.id, output_index: outputIndex, content_index: 0, delta, logprobs: [] };
      } else if (open.text.trim() !== "") {
        open.announced = true;
        yield {
          type: "response.output_item.added",
          output_index: outputIndex,
          item: { type: "message", id: open.id, status: "in_progress", role: "assistant", content: [] },
        };
        yield {
          type: "response.content_part.added",
          item_id: open.id,
          output_index: outputIndex,
          content_index: 0,
          part: { type: "output_text", text: "", annotations: [], logprobs: [] },
        };
        yield {
          type: "response.output_text.delta",
          item_id: open.id,
          output_index: outputIndex,
          content_index: 0,
          delta: open.text,
          logprobs: [],
        };
      }
    } else if (isTerminal(event.type)) {
      yield* close();
      const run = await finalRun();
      if (event.type === "run_paused") {
        const actions = Array.isArray(event.data.required_actions) ? (event.data.required_actions as Run["required_actions"]) : [];
        const calls = actions.map((action) => functionCallItem(event.run_id, action));
        for (const call of calls) {
          yield* functionCallEvents(call, outputIndex);
          outputIndex += 1;
        }
        yield { type: "response.completed", response: pausedResponse(run, surface, event, [...tools.items], calls) };
        continue;
      }
      const response = renderResponse(run, surface, [...tools.items], tools.answerId);
      yield {
        type:
          response.status === "completed"
            ? "response.completed"
            : response.status === "incomplete"
              ? "response.incomplete"
              : "response.failed",
        response,
      };
    }
  }
}

/**
 * Numbers the events from 0 and writes them as SSE (`event:`, `data:`): those up to
 * `startingAfter` and those of stretches before `stretch` are skipped, and the stream ends with
 * the final event (`response.completed`, `.failed`, `.incomplete`) of the first stretch it shows.
 */
export function responsesSse(
  events: AsyncGenerator<StretchEvent>,
  from: { startingAfter?: number; stretch?: number } = {},
): ReadableStream<Uint8Array> {
  const startingAfter = from.startingAfter ?? -1;
  const firstStretch = from.stretch ?? 0;
  let sequence = 0;
  return new ReadableStream({
    async pull(controller) {
      for (;;) {
        const next = await events.next();
        if (next.done) return controller.close();
        const sequence_number = sequence++;
        const { stretch, event } = next.value;
        if (sequence_number <= startingAfter || stretch < firstStretch) continue;
        const body = { ...event, sequence_number };
        controller.enqueue(encoder.encode(`event: ${event.type}\ndata: ${JSON.stringify(body)}\n\n`));
        if (FINAL_TYPES.has(event.type)) {
          // The Open Responses specification ends a stream with a literal `[DONE]`, as OpenAI's streams do.
          controller.enqueue(encoder.encode("data: [DONE]\n\n"));
          controller.close();
          await events.return(undefined);
        }
        return;
      }
    },
    async cancel() {
      await events.return(undefined);
    },
  });
}
