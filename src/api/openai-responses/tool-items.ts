import type { RunEvent } from "../../session";

/** A call as its `tool_call_started` event gives it. */
type StartedCall = { tool_call_id: string; name: string; arguments: unknown };

const textOf = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value ?? null));

/**
 * A call as OpenAI's `function_call` item (`call_id` = Agentry's `tool_call_id`, `arguments` a
 * JSON string). Its id names the run (`fc_<run id>_<tool_call_id>`), so an `item_reference` to it
 * is found again (references.ts).
 */
export function functionCallItem(runId: string, call: StartedCall) {
  return {
    type: "function_call" as const,
    id: `fc_${runId}_${call.tool_call_id}`,
    call_id: call.tool_call_id,
    name: call.name,
    arguments: JSON.stringify(call.arguments ?? {}),
    status: "completed" as const,
  };
}

/** A server tool's result as OpenAI's `function_call_output` item; a failed tool's output is its error text. */
export function functionCallOutputItem(call: StartedCall, ended: RunEvent) {
  const output = ended.type === "tool_call_error" ? ended.data.error : ended.data.output;
  return {
    type: "function_call_output" as const,
    id: `fco_${ended.run_id}_${call.tool_call_id}`,
    call_id: call.tool_call_id,
    output: textOf(output),
    status: "completed" as const,
  };
}

/** An assistant message item of output text. */
export function messageItem(id: string, text: string, status: "completed" | "incomplete") {
  return {
    type: "message" as const,
    id,
    status,
    role: "assistant" as const,
    content: [{ type: "output_text" as const, text, annotations: [], logprobs: [] }],
  };
}

export type ServerToolItem =
  | ReturnType<typeof functionCallItem>
  | ReturnType<typeof functionCallOutputItem>
  | ReturnType<typeof messageItem>;

/**
 * Follows a run's events and pairs each `tool_call_started` with its `tool_call_completed` /
 * `tool_call_error` in the same stretch: the agent's own tools (webhook, builtin), which ran on
 * the server. A stretch starts at `run_continued`; the client's results that continue it (ended
 * without a start in the stretch) and the client calls a pause waits for (started, never ended)
 * are not server tools. The text a step streams before its tool calls becomes a message item
 * before them (as a model's text before its function calls is in OpenAI's output); a retried or
 * repaired attempt's text is void, and the last step's text is the run's answer (render.ts).
 */
export class ServerToolCalls {
  private started = new Map<string, StartedCall>();
  private text: { id: string; text: string } | null = null;
  readonly items: ServerToolItem[] = [];

  /** When the current stretch paused on client calls (its `run_paused`), or null. */
  pausedAt: string | null = null;

  /** The id of the message the latest step's text streamed as: the run's answer, when it is the last step. */
  get answerId(): string | null {
    return this.text?.id ?? null;
  }

  /** The call an event ends when it is a server tool's end, after recording its two items; else null. */
  add(event: RunEvent): StartedCall | null {
    if (event.type === "run_continued") {
      this.started.clear();
      this.items.length = 0;
      this.text = null;
      this.pausedAt = null;
      return null;
    }
    if (event.type === "run_paused") {
      this.pausedAt = event.created_at;
      return null;
    }
    if (event.type === "content_delta") {
      this.text ??= { id: `msg_${event.run_id}_${event.seq}`, text: "" };
      this.text.text += String(event.data.text ?? "");
      return null;
    }
    if (event.type === "retry" || event.type === "output_repair" || event.type === "model_request_started") {
      this.text = null;
      return null;
    }
    const id = String(event.data.tool_call_id ?? "");
    if (event.type === "tool_call_started") {
      // A whitespace-only text (Claude often streams "\n\n" ahead of a tool call) is no message.
      if (this.text && this.text.text.trim() !== "") this.items.push(messageItem(this.text.id, this.text.text, "completed"));
      this.text = null;
      this.started.set(id, { tool_call_id: id, name: String(event.data.name ?? ""), arguments: event.data.arguments });
      return null;
    }
    if (event.type !== "tool_call_completed" && event.type !== "tool_call_error") return null;
    const call = this.started.get(id);
    if (!call) return null;
    this.started.delete(id);
    this.items.push(functionCallItem(event.run_id, call), functionCallOutputItem(call, event));
    return call;
  }
}

/** The server tool items of a run's current stretch, from its events, and the id its answer streamed as. */
export function serverToolItems(events: RunEvent[]): { items: ServerToolItem[]; answerId: string | null; pausedAt: string | null } {
  const calls = new ServerToolCalls();
  for (const event of events) calls.add(event);
  return { items: calls.items, answerId: calls.answerId, pausedAt: calls.pausedAt };
}
