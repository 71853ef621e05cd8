import type { Context } from "hono";
import type { AppEnv } from "../router";
import { invalidFields } from "../errors";
import { currentRun } from "../current-run";
import { responseOf } from "./answer";
import { ownedResponse } from "./deleted-responses";
import type { ReadInput } from "./conversation";
import type { InputItem } from "./input-items";
import { storedSurface } from "./surface";

/** The run a message item's id names: `msg_<run id>` or `msg_<run id>_<seq>` (render.ts, stream.ts). */
const MESSAGE_ID = /^msg_(run_[0-9a-z]+)(?:_\d+)?$/;

/**
 * The earlier items of a brought conversation with each `item_reference` to one of the tenant's
 * response messages replaced by that message (the AI SDK refers to what it got back by id instead
 * of resending it). A reference to anything else is left for historyOf to refuse, naming it.
 */
export async function resolveReferences(c: Context<AppEnv>, earlier: ReadInput["earlier"]): Promise<ReadInput["earlier"]> {
  const tenant = c.get("tenant");
  const outputs = new Map<string, Promise<Record<string, unknown>[]>>();
  const outputOf = (runId: string) => {
    let found = outputs.get(runId);
    if (!found) {
      found = (async () => {
        const stored = await ownedResponse(c.env.DB, tenant, runId);
        return (await responseOf(c, await currentRun(c.env, tenant, stored), storedSurface(stored))).output as Record<string, unknown>[];
      })();
      outputs.set(runId, found);
    }
    return found;
  };
  return Promise.all(
    earlier.map(async (entry) => {
      if (entry.item.type !== "item_reference") return entry;
      const runId = MESSAGE_ID.exec(entry.item.id)?.[1];
      if (runId === undefined) return entry;
      const item = (await outputOf(runId).catch(() => [])).find((output) => output.id === entry.item.id);
      if (!item || item.type !== "message") {
        throw invalidFields([{ path: `input.${entry.index}.id`, message: `${entry.item.id} is no message of a response of yours` }]);
      }
      const content = Array.isArray(item.content) ? (item.content as { text?: unknown }[]) : [];
      const text = content.map((part) => (typeof part.text === "string" ? part.text : "")).join("");
      const resolved: InputItem = { type: "message", role: "assistant", content: text };
      return { item: resolved, index: entry.index };
    }),
  );
}
