import { isTerminal, type Run, type RunEvent } from "../../session";
import { renderResponse } from "./render";

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

/**
 * Translates one run's events, from its first, into the Responses stream events, in an order
 * that depends only on those events: the same run always gives the same `sequence_number`s, so a
 * client resumes with `starting_after`. `finalRun` reads the run once its stretch has ended.
 */
export async function* responsesEventsOf(
  events: AsyncIterable<RunEvent>,
  startingRun: Run,
  finalRun: () => Promise<Run>,
): AsyncGenerator<ResponsesEvent> {
  const snapshot = (status: "in_progress") => ({ ...renderResponse(startingRun), status, output: [], completed_at: null, error: null });
  yield { type: "response.created", response: snapshot("in_progress") };
  yield { type: "response.in_progress", response: snapshot("in_progress") };
  let outputIndex = 0;
  let open: { id: string; text: string } | null = null;
  const close = function* (): Generator<ResponsesEvent> {
    if (!open) return;
    const { id, text } = open;
    const part = { type: "output_text", text, annotations: [], logprobs: [] };
    yield { type: "response.output_text.done", item_id: id, output_index: outputIndex, content_index: 0, text, logprobs: [] };
    yield { type: "response.content_part.done", item_id: id, output_index: outputIndex, content_index: 0, part };
    yield { type: "response.output_item.done", output_index: outputIndex, item: { type: "message", id, status: "completed", role: "assistant", content: [part] } };
    outputIndex += 1;
    open = null;
  };
  for await (const event of events) {
    if (event.type === "model_request_started") {
      // The text of an earlier step (or of a failed attempt) is not the final answer's.
      yield* close();
    } else if (event.type === "content_delta") {
      const delta = String(event.data.text ?? "");
      if (!open) {
        open = { id: `msg_${event.run_id}_${event.seq}`, text: "" };
        yield { type: "response.output_item.added", output_index: outputIndex, item: { type: "message", id: open.id, status: "in_progress", role: "assistant", content: [] } };
        yield { type: "response.content_part.added", item_id: open.id, output_index: outputIndex, content_index: 0, part: { type: "output_text", text: "", annotations: [], logprobs: [] } };
      }
      open.text += delta;
      yield { type: "response.output_text.delta", item_id: open.id, output_index: outputIndex, content_index: 0, delta, logprobs: [] };
    } else if (isTerminal(event.type)) {
      yield* close();
      const run = await finalRun();
      const response = renderResponse(run);
      if (event.type === "run_paused") {
        for (const item of response.output) {
          if (item.type !== "function_call") continue;
          yield { type: "response.output_item.added", output_index: outputIndex, item: { ...item, arguments: "", status: "in_progress" } };
          yield { type: "response.function_call_arguments.delta", item_id: item.id, output_index: outputIndex, delta: item.arguments };
          yield { type: "response.function_call_arguments.done", item_id: item.id, output_index: outputIndex, name: item.name, arguments: item.arguments };
          yield { type: "response.output_item.done", output_index: outputIndex, item };
          outputIndex += 1;
        }
      }
      const type = response.status === "completed" ? "response.completed" : response.status === "incomplete" ? "response.incomplete" : "response.failed";
      yield { type, response };
      return;
    }
  }
}

/** Numbers the events from 0 and writes them as SSE (`event:`, `data:`), skipping those up to `startingAfter`. */
export function responsesSse(events: AsyncGenerator<ResponsesEvent>, startingAfter = -1): ReadableStream<Uint8Array> {
  let sequence = 0;
  return new ReadableStream({
    async pull(controller) {
      for (;;) {
        const next = await events.next();
        if (next.done) return controller.close();
        const sequence_number = sequence++;
        if (sequence_number <= startingAfter) continue;
        const body = { ...next.value, sequence_number };
        controller.enqueue(encoder.encode(`event: ${next.value.type}\ndata: ${JSON.stringify(body)}\n\n`));
        return;
      }
    },
    async cancel() {
      await events.return(undefined);
    },
  });
}
