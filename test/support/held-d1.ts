import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import type { Env } from "../../src/env";

/** A statement as the object wrote it: its SQL and its parameters. */
export type SeenStatement = { sql: string; params: unknown[] };

/**
 * A held D1 batch: resolves `reached` when the object sends it, goes to D1 on `release()`.
 * `instance` is the object itself, for hooks set while the batch is held (a
 * `runInDurableObject` call does not get through while the object awaits the held batch).
 * The test resumes from `reached` in the object's I/O context: a response it opened before
 * cannot be read after it (workerd refuses I/O across contexts), one it opens after can.
 */
export type HeldBatch = { reached: Promise<void>; release: (failure?: Error) => void; instance: unknown };

export const sessionStub = (sessionId: string, tenant = "default") => env.SESSION.get(env.SESSION.idFromName(`${tenant}/${sessionId}`));

/**
 * Swaps the D1 binding of one session's object (the current instance) for one whose `batch`
 * goes through `onBatch`, which sees each statement's SQL and parameters and calls `send` to
 * hand the batch to the real D1. Returns the object instance.
 */
export async function wrapSessionD1(
  sessionId: string,
  onBatch: (statements: SeenStatement[], send: () => Promise<unknown>) => Promise<unknown>,
): Promise<unknown> {
  let object!: unknown;
  await runInDurableObject(sessionStub(sessionId), (instance) => {
    object = instance;
    // The object reads its bindings from `env` (the DurableObject's) and from its core's `env`.
    const wired = instance as unknown as { env: Env; core: { env: Env } };
    const real = wired.env.DB;
    const seen = new WeakMap<object, SeenStatement>();
    const prepare = (sql: string) => {
      const statement = real.prepare(sql);
      const bind = statement.bind.bind(statement);
      seen.set(statement, { sql, params: [] });
      statement.bind = (...params: unknown[]) => {
        const bound = bind(...params);
        seen.set(bound, { sql, params });
        return bound;
      };
      return statement;
    };
    const batch = (statements: D1PreparedStatement[]) =>
      onBatch(
        statements.map((s) => seen.get(s) ?? { sql: "", params: [] }),
        () => real.batch(statements),
      );
    const db = new Proxy(real, {
      get(target, property) {
        if (property === "prepare") return prepare;
        if (property === "batch") return batch;
        const value: unknown = Reflect.get(target, property);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const wrapped = { ...wired.env, DB: db };
    wired.env = wrapped;
    wired.core.env = wrapped;
  });
  return object;
}

/**
 * Swaps the D1 binding of one session's object for one that holds the first batch matching
 * `matches` until the test releases it (later batches go through). The window between a
 * local commit and its D1 write, which is milliseconds locally and a network call in
 * production, stays open for as long as the test needs.
 */
export async function holdD1Batch(
  sessionId: string,
  matches: (statements: SeenStatement[]) => boolean,
  /**
   * When set, the batch waits at this bucket's gate of the test tool server instead of on
   * `release()`, and `reached` is left unused: the test learns it is held from `callsReceived`
   * in its own context, so it may then reset the object (which would end a test resumed in it).
   */
  gateBucket?: string,
): Promise<HeldBatch> {
  let reach!: () => void;
  let release!: (failure?: Error) => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  // Released with an error, the batch fails as D1 would, without reaching it.
  const released = new Promise<Error | undefined>((resolve) => (release = resolve));
  let armed = true;
  const instance = await wrapSessionD1(sessionId, async (statements, send) => {
    if (armed && matches(statements)) {
      armed = false;
      if (gateBucket) {
        await fetch(`${env.TOOL_SERVER_URL}/gate/${gateBucket}`, { method: "POST", body: "{}" });
      } else {
        reach();
        const failure = await released;
        if (failure) throw failure;
      }
    }
    return send();
  });
  return { reached, release, instance };
}

/** True for a batch that writes a run row with `status`. */
export const writesRunStatus = (status: string) => (statements: SeenStatement[]) =>
  statements.some((s) => /^\s*INSERT INTO "?runs"?\s/i.test(s.sql) && s.params.includes(status));

/** True for a batch that deletes the session's rows. */
export const deletesSession = (statements: SeenStatement[]) => statements.some((s) => /^\s*DELETE FROM "?sessions"?\s/i.test(s.sql));
