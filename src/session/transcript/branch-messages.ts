import { sendableHistory } from "./message-parts";
import type { RunBase, RunRecord } from "../../run-model/run-record";
import type { SessionStore, StoredMessage } from "../store/session-store";

/** A run's history: what its ancestors pass on (`prefix`), then its own messages. */
export type Branch = { prefix: StoredMessage[]; own: StoredMessage[] };

/**
 * Resolves a run's history from the run tree (RunBase): walking up from the run, each
 * ancestor contributes its own messages up to the smallest `until` on the way. A run made
 * before forks existed continues the run created before it. Ancestors' unfinished steps
 * (tool calls without results, as a cancel can leave) are not passed on.
 */
export function branchOf(store: SessionStore, run: RunRecord): Branch {
  const runs = store.runTree();
  const byId = new Map(runs.map((r) => [r.id, r]));
  const caps = new Map<string, number>();
  let cap = Number.POSITIVE_INFINITY;
  let current: { id: string; base: RunBase | null } | undefined = { id: run.id, base: run.base ?? null };
  const seen = new Set<string>();
  while (current && !seen.has(current.id)) {
    seen.add(current.id);
    const base: RunBase = current.base ?? legacyBase(runs, current.id);
    if (base.parent === null) break;
    if (base.until !== null) cap = Math.min(cap, base.until);
    caps.set(base.parent, cap);
    current = byId.get(base.parent);
  }
  // The session's messages are parsed once and kept (store/message-cache.ts): a step parses only its new ones.
  const all = store.messages();
  const prefix = all.filter((m) => {
    const limit = caps.get(m.run_id);
    return limit !== undefined && m.index <= limit;
  });
  return { prefix: sendableHistory(prefix), own: all.filter((m) => m.run_id === run.id) };
}

/** Runs made before RunBase existed continued the whole session before them. */
function legacyBase(runs: { id: string }[], runId: string): RunBase {
  const i = runs.findIndex((r) => r.id === runId);
  const previous = i > 0 ? runs[i - 1] : undefined;
  return { parent: previous?.id ?? null, until: null };
}

export const messagesOf = (branch: Branch) => [...branch.prefix, ...branch.own];
