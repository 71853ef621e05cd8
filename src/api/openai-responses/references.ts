import type { Context } from "hono";
import type { RunEvent, RunRecord } from "../../session";
import type { AppEnv } from "../router";
import { ApiError, invalidFields } from "../errors";
import { storedEventsOf } from "./answer";
import { ownedResponse } from "./deleted-responses";
import type { ReadInput } from "./conversation";
import type { InputItem } from "./input-items";

/** The run an output item's id names: `msg_<run id>[_<seq>]`, `fc_<run id>_<call>`, `fco_<run id>_<call>` (tool-items.ts). */
const ITEM_ID = /^(?:msg|fco?)_(run_[0-9a-z]+)(?:_.+)?$/;

/** The responses one request's item references may name (each is a D1 read and a session call). */
const MAX_REFERENCED_RESPONSES = 20;

const textOf = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value ?? null));

/**
 * Every output item a run gave, in every stretch, by id, as the input item it stands for: the text
 * of each model step (`msg_<run>_<seq>`, but a voided attempt's), each tool call and each server
 * tool's result, and the final answer (`msg_<run>`).
 */
function itemsOfRun(run: RunRecord, events: RunEvent[]): Map<string, InputItem> {
  const items = new Map<string, InputItem>();
  let open: { id: string; text: string } | null = null;
  const close = () => {
    if (open && open.text.trim() !== "") items.set(open.id, { type: "message", role: "assistant", content: open.text });
    open = null;
  };
  for (const event of events) {
    const data = event.data as Record<string, unknown>;
    if (event.type === "content_delta") {
      open ??= { id: `msg_${run.id}_${event.seq}`, text: "" };
      open.text += String(data.text ?? "");
    } else if (event.type === "retry" || event.type === "output_repair") {
      open = null;
    } else if (event.type === "model_request_started") {
      close();
    } else if (event.type === "tool_call_started") {
      close();
      const call_id = String(data.tool_call_id ?? "");
      items.set(`fc_${run.id}_${call_id}`, {
        type: "function_call",
        call_id,
        name: String(data.name ?? ""),
        arguments: JSON.stringify(data.arguments ?? {}),
      });
    } else if (event.type === "tool_call_completed" || event.type === "tool_call_error") {
      const call_id = String(data.tool_call_id ?? "");
      items.set(`fco_${run.id}_${call_id}`, {
        type: "function_call_output",
        call_id,
        output: textOf(event.type === "tool_call_error" ? data.error : data.output),
      });
    }
  }
  close();
  if (run.output !== null && run.output !== undefined)
    items.set(`msg_${run.id}`, { type: "message", role: "assistant", content: textOf(run.output) });
  return items;
}

/**
 * The earlier items of a brought conversation with each `item_reference` to an output item of one
 * of the caller's responses replaced by that item (the AI SDK refers to what it got back by id
 * instead of resending it). Any other reference is a 400 naming it.
 */
export async function resolveReferences(c: Context<AppEnv>, earlier: ReadInput["earlier"]): Promise<ReadInput["earlier"]> {
  const tenant = c.get("tenant");
  const named = new Set(earlier.flatMap(({ item }) => (item.type === "item_reference" ? [ITEM_ID.exec(item.id)?.[1] ?? ""] : [])));
  if (named.size > MAX_REFERENCED_RESPONSES) {
    throw invalidFields([
      { path: "input", message: `item references name ${named.size} responses; at most ${MAX_REFERENCED_RESPONSES} in one request` },
    ]);
  }
  const runs = new Map<string, Promise<Map<string, InputItem>>>();
  const itemsOf = (runId: string) => {
    let found = runs.get(runId);
    if (!found) {
      found = (async () => {
        const run = await ownedResponse(c.env.DB, tenant, runId);
        return itemsOfRun(run, await storedEventsOf(c, run));
      })();
      runs.set(runId, found);
    }
    return found;
  };
  return Promise.all(
    earlier.map(async (entry) => {
      if (entry.item.type !== "item_reference") return entry;
      const runId = ITEM_ID.exec(entry.item.id)?.[1];
      // An unknown (or foreign) response is no output of the caller's; any other failure is the server's.
      const notFound = (error: unknown) =>
        error instanceof ApiError && error.type === "not_found" ? new Map<string, InputItem>() : Promise.reject(error);
      const item = runId === undefined ? undefined : (await itemsOf(runId).catch(notFound)).get(entry.item.id);
      if (!item)
        throw invalidFields([{ path: `input.${entry.index}.id`, message: `${entry.item.id} is no output item of a response of yours` }]);
      return { item, index: entry.index };
    }),
  );
}
