// The bench's measures. Each returns plain figures and pushes any correctness failure (a wrong
// answer, a lost run, more than one turn accepted) onto `ctx.failures`; a slow figure never fails.
import { randomUUID } from "node:crypto";
import { bareRun } from "./bare-loop.mjs";
import { readSse, runTurn } from "./agentry-client.mjs";
import { cpuDelta, groupCpu, healthTimes } from "./agentry-server.mjs";
import { decompose } from "./fake-provider.mjs";
import { median, now, p95, sleep, sum } from "./stats.mjs";

/** @import Anthropic from "@anthropic-ai/sdk" */
/** @import { SseFrame, Tenant, TenantAt } from "./agentry-client.mjs" */
/** @import { startAgentry } from "./agentry-server.mjs" */
/** @import { startFakeProvider } from "./fake-provider.mjs" */

/** @typedef {{ failures: string[] }} Failures Where the measures record correctness failures. */
/**
 * @typedef {object} BenchContext What the measures run against (scripts/bench/index.mjs builds it).
 * @property {string[]} failures
 * @property {Awaited<ReturnType<typeof startFakeProvider>>} provider
 * @property {Awaited<ReturnType<typeof startAgentry>>} agentry
 * @property {Tenant} tenant
 * @property {string} agentId
 * @property {Anthropic} bare the bare loop's client
 * @property {string | null} [direct] the Worker's own socket, when found
 */
/** @typedef {Awaited<ReturnType<typeof runTurn>>} Turn */
/**
 * @typedef {object} Sample One tool run of either system (`ok: false` carries nothing else).
 * @property {boolean} ok
 * @property {number} [ms]
 * @property {ReturnType<typeof decompose>} [parts]
 * @property {ReturnType<typeof cpuDelta>} [cpu]
 * @property {number} [selfMs]
 */

/** Five `current_time` calls, one per model answer, then a final text: 6 model calls. */
export const TOOL_STEPS = 5;
export const TOOL_INPUT = "[[tool current_time {}]] ".repeat(TOOL_STEPS).trim();
const TOOL_ANSWER = new RegExp(
  `^(current_time returned: \\{"utc":"[^"]+"\\}\\n){${TOOL_STEPS - 1}}current_time returned: \\{"utc":"[^"]+"\\}$`,
);

/** @param {Failures} ctx @param {string} what */
const fail = (ctx, what) => {
  ctx.failures.push(what);
  console.error(`  FAIL ${what}`);
};

/**
 * Checks an Agentry turn of the tool input; returns whether it is right.
 * @param {Failures} ctx
 * @param {string} label
 * @param {Turn} turn
 */
function checkToolRun(ctx, label, turn) {
  const { status, run, error } = turn;
  if (status !== 200 || run?.status !== "completed") {
    fail(ctx, `${label}: HTTP ${status}, run ${run?.status ?? "?"} ${error ?? JSON.stringify(run?.error ?? run)}`.slice(0, 400));
    return false;
  }
  if (!TOOL_ANSWER.test(String(run.output)) || run.metrics?.model_calls !== TOOL_STEPS + 1 || run.metrics.tool_calls !== TOOL_STEPS) {
    fail(ctx, `${label}: wrong answer ${JSON.stringify(run.output).slice(0, 200)} (${run.metrics?.model_calls} model calls)`);
    return false;
  }
  return true;
}

/**
 * One Agentry tool run on a new session, with the provider's records and the runtime's CPU.
 * @param {BenchContext} ctx
 * @param {string} label
 * @returns {Promise<Sample>}
 */
async function agentryToolRun(ctx, label) {
  const mark = ctx.provider.mark();
  const cpuBefore = groupCpu(ctx.agentry.group);
  const selfBefore = process.cpuUsage();
  const turn = await runTurn(ctx.tenant, ctx.agentId, TOOL_INPUT);
  const self = process.cpuUsage(selfBefore);
  const cpu = cpuDelta(cpuBefore, groupCpu(ctx.agentry.group));
  const ok = checkToolRun(ctx, label, turn);
  const requests = ctx.provider.since(mark);
  return {
    ok,
    ms: turn.endedAt - turn.startedAt,
    parts: decompose(turn.startedAt, turn.endedAt, requests),
    cpu,
    selfMs: (self.user + self.system) / 1000,
  };
}

/**
 * One bare SDK tool run, with the provider's records.
 * @param {BenchContext} ctx
 * @param {string} label
 * @returns {Promise<Sample>}
 */
async function bareToolRun(ctx, label) {
  const mark = ctx.provider.mark();
  const selfBefore = process.cpuUsage();
  /** @type {Awaited<ReturnType<typeof bareRun>>} */
  let result;
  try {
    result = await bareRun(ctx.bare, TOOL_INPUT);
  } catch (error) {
    fail(ctx, `${label}: ${error instanceof Error ? error.message : String(error)}`);
    return { ok: false };
  }
  const self = process.cpuUsage(selfBefore);
  if (!TOOL_ANSWER.test(result.output) || result.modelCalls !== TOOL_STEPS + 1) {
    fail(ctx, `${label}: wrong answer ${JSON.stringify(result.output).slice(0, 200)}`);
    return { ok: false };
  }
  const requests = ctx.provider.since(mark);
  return {
    ok: true,
    ms: result.endedAt - result.startedAt,
    parts: decompose(result.startedAt, result.endedAt, requests),
    selfMs: (self.user + self.system) / 1000,
  };
}

/** @param {Sample[]} samples */
const summarise = (samples) => {
  const ok = samples.filter((s) => s.ok);
  /** @param {(sample: Sample) => number | null | undefined} f */
  const pick = (f) =>
    ok.flatMap((s) => {
      const v = f(s);
      return v !== undefined && v !== null ? [v] : [];
    });
  const firstCpu = ok[0]?.cpu;
  return {
    runs: ok.length,
    median: median(pick((s) => s.ms)),
    p95: p95(pick((s) => s.ms)),
    before: median(pick((s) => s.parts?.before)),
    gaps: median(pick((s) => s.parts?.gaps)),
    after: median(pick((s) => s.parts?.after)),
    selfCpu: median(pick((s) => s.selfMs)),
    runtimeCpu: firstCpu ? sum(pick((s) => s.cpu?.total)) / ok.length : null,
    runtimeCpuByName: firstCpu
      ? Object.fromEntries(Object.keys(firstCpu.byName).map((n) => [n, sum(pick((s) => s.cpu?.byName[n] ?? 0)) / ok.length]))
      : null,
  };
};

/**
 * Agentry and the bare loop, interleaved (A, B, A, B …) at latency L after a warm-up.
 * @param {BenchContext} ctx
 * @param {number} latencyMs
 * @param {number} warmup
 * @param {number} runs
 */
export async function interleaved(ctx, latencyMs, warmup, runs) {
  ctx.provider.setLatency(latencyMs);
  for (let i = 0; i < warmup; i += 1) {
    await agentryToolRun(ctx, `warm-up Agentry run (L=${latencyMs})`);
    await bareToolRun(ctx, `warm-up bare run (L=${latencyMs})`);
  }
  const agentry = [];
  const bare = [];
  for (let i = 0; i < runs; i += 1) {
    agentry.push(await agentryToolRun(ctx, `Agentry run ${i + 1} (L=${latencyMs})`));
    bare.push(await bareToolRun(ctx, `bare run ${i + 1} (L=${latencyMs})`));
  }
  return { latencyMs, agentry: summarise(agentry), bare: summarise(bare) };
}

/**
 * Opens a turn that waits a minute for its first token; resolves once its model call is in flight.
 * @param {BenchContext} ctx
 * @param {string} sessionId
 */
async function holdSession(ctx, sessionId) {
  const response = await ctx.tenant.call("POST", `/v1/agents/${ctx.agentId}/runs`, {
    input: "[[slow 60000]] hold",
    session_id: sessionId,
    stream: true,
  });
  if (response.status !== 200) throw new Error(`holding turn: HTTP ${response.status} ${await response.text()}`);
  /** @type {string | null | undefined} */
  let runId = null;
  await readSse(response, (frame) => {
    /** @type {{ run_id?: string }} */
    const event = JSON.parse(frame.data);
    runId ??= event.run_id;
    return frame.event === "model_request_started";
  });
  return runId;
}

/**
 * @param {BenchContext} ctx
 * @param {string | null | undefined} runId
 */
async function cancelRun(ctx, runId) {
  const response = await ctx.tenant.call("POST", `/v1/agents/${ctx.agentId}/runs/${runId}/cancel`);
  /** @type {{ status?: string } | null} */
  const run = await response.json().catch(() => null);
  if (response.status !== 200 || run?.status !== "cancelled") fail(ctx, `cancel of ${runId}: HTTP ${response.status} ${run?.status}`);
}

/**
 * @param {Turn} turn
 * @param {string | null | undefined} activeRunId
 */
const isBusy = (turn, activeRunId) =>
  turn.status === 409 &&
  turn.run?.error?.type === "session_busy" &&
  (activeRunId === undefined || turn.run.error.details?.active_run_id === activeRunId);

/**
 * p50 of the time to a `409 session_busy` for a second turn on a session whose turn is in a model
 * call, asked through `tenant` (wrangler dev's address, or the Worker's own socket).
 * @param {BenchContext} ctx
 * @param {number} samples
 * @param {TenantAt} [tenant]
 */
export async function busyDecision(ctx, samples, tenant = ctx.tenant) {
  ctx.provider.setLatency(0);
  const sessionId = `bench-busy-${randomUUID()}`;
  const holder = await holdSession(ctx, sessionId);
  /** @type {number[]} */
  const times = [];
  for (let i = 0; i < samples; i += 1) {
    const turn = await runTurn(tenant, ctx.agentId, "second turn", { session_id: sessionId });
    if (!isBusy(turn, holder)) fail(ctx, `second turn on a busy session: HTTP ${turn.status} ${JSON.stringify(turn.run).slice(0, 200)}`);
    else times.push(turn.endedAt - turn.startedAt);
  }
  await cancelRun(ctx, holder);
  return { samples: times.length, p50: median(times), p95: p95(times) };
}

/**
 * `blasts` times: `size` turns at once on one new session; exactly one may be accepted.
 * @param {BenchContext} ctx
 * @param {number} blasts
 * @param {number} size
 */
export async function blast(ctx, blasts, size) {
  ctx.provider.setLatency(0);
  let exact = 0;
  /** @type {number[]} */
  const walls = [];
  for (let b = 0; b < blasts; b += 1) {
    const sessionId = `bench-blast-${randomUUID()}`;
    /** @type {Turn[]} */
    const results = [];
    const startedAt = now();
    const all = Array.from({ length: size }, () =>
      runTurn(ctx.tenant, ctx.agentId, "[[slow 60000]] blast", { session_id: sessionId }).then((turn) => results.push(turn)),
    );
    // The accepted turn waits for its first token; every other one must come back 409 meanwhile.
    const deadline = now() + 60_000;
    while (results.length < size - 1 && now() < deadline) await sleep(10);
    walls.push(now() - startedAt);
    const active = results.find((turn) => turn.status === 409)?.run?.error?.details?.active_run_id;
    if (active) await cancelRun(ctx, active);
    await Promise.all(all);
    const accepted = results.filter((turn) => turn.status === 200);
    const busy = results.filter((turn) => isBusy(turn, active));
    if (accepted.length === 1 && busy.length === size - 1 && accepted[0]?.run?.id === active) exact += 1;
    else {
      const statuses = results
        .map((turn) => turn.status)
        .sort()
        .join(",");
      fail(ctx, `blast ${b + 1}: ${accepted.length} accepted, ${busy.length} session_busy of ${size} (statuses ${statuses.slice(0, 200)})`);
    }
  }
  return { blasts, size, exact, wallP50: median(walls) };
}

/**
 * `count` tool runs at once, each on its own session, at latency L.
 * @param {BenchContext} ctx
 * @param {number} count
 * @param {number} latencyMs
 */
export async function concurrent(ctx, count, latencyMs) {
  ctx.provider.setLatency(latencyMs);
  const startedAt = now();
  const turns = await Promise.all(Array.from({ length: count }, () => runTurn(ctx.tenant, ctx.agentId, TOOL_INPUT)));
  const wall = now() - startedAt;
  /** @type {Failures} */
  const probe = { failures: [] };
  const ok = turns.filter((turn, i) => checkToolRun(probe, `run ${i + 1} of ${count} at once`, turn));
  for (const failure of probe.failures.slice(0, 5)) ctx.failures.push(failure);
  if (probe.failures.length > 5) ctx.failures.push(`… and ${probe.failures.length - 5} more of ${count} at once`);
  const ms = ok.map((turn) => turn.endedAt - turn.startedAt);
  return { count, latencyMs, errors: count - ok.length, median: median(ms), p95: p95(ms), wall };
}

const FILLER = "The quarterly report covers revenue, churn, hiring plans and the roadmap for the next release. ";

/**
 * Sequential short turns of one session with 2 KB inputs; the time of each turn, by turn number.
 * @param {BenchContext} ctx
 * @param {number} turns
 */
export async function longSession(ctx, turns) {
  ctx.provider.setLatency(0);
  const sessionId = `bench-long-${randomUUID()}`;
  /** @type {number[]} */
  const times = [];
  /** @type {number[]} */
  const bytes = [];
  /** @type {number[]} */
  const own = [];
  for (let t = 1; t <= turns; t += 1) {
    const input = `${`Turn ${t}. ${FILLER.repeat(Math.ceil(2048 / FILLER.length))}`.slice(0, 2048)} [[words 50]]`;
    const mark = ctx.provider.mark();
    const turn = await runTurn(ctx.tenant, ctx.agentId, input, { session_id: sessionId });
    const calls = ctx.provider.since(mark);
    bytes.push(calls[0]?.bytes ?? 0);
    if (turn.status !== 200 || turn.run?.status !== "completed" || String(turn.run.output).split(" ").length !== 50) {
      fail(
        ctx,
        `turn ${t} of one session: HTTP ${turn.status} ${JSON.stringify(turn.run?.error ?? turn.error ?? turn.run?.output).slice(0, 200)}`,
      );
      break;
    }
    times.push(turn.endedAt - turn.startedAt);
    // Agentry's part: the turn without the provider's own time (reading the request, answering).
    own.push(turn.endedAt - turn.startedAt - sum(calls.map((c) => (c.endedAt ?? c.arrivedAt) - c.arrivedAt)));
  }
  /** @param {number} last */
  const window = (last, values = times) => (values.length >= last ? median(values.slice(last - 10, last)) : null);
  // The model request carries the whole session: its size at each window says what grew.
  const requestBytes = { first: window(10, bytes), at100: window(100, bytes), at500: window(500, bytes) };
  const ownTime = { first: window(10, own), at100: window(100, own), at500: window(500, own) };
  return { turns: times.length, first: window(10), at100: window(100), at500: window(500), requestBytes, ownTime };
}

/**
 * Streamed turns: the time from the provider's first text byte to the first `content_delta` frame
 * the client reads; then a reconnect to each run's events with `Last-Event-ID`, timed to the
 * first replayed frame, and checked to replay every later event.
 * @param {BenchContext} ctx
 * @param {number} samples
 */
export async function streaming(ctx, samples) {
  ctx.provider.setLatency(20);
  /** @type {number[]} */
  const ttft = [];
  /** @type {number[]} */
  const reconnect = [];
  for (let i = 0; i < samples; i += 1) {
    const mark = ctx.provider.mark();
    const response = await ctx.tenant.call("POST", `/v1/agents/${ctx.agentId}/runs`, { input: "stream [[words 30]]", stream: true });
    /** @type {SseFrame[]} */
    const frames = [];
    /** @type {number | null} */
    let firstDeltaAt = null;
    if (response.status === 200) {
      await readSse(response, (frame) => {
        frames.push(frame);
        if (frame.event === "content_delta") firstDeltaAt ??= frame.at;
      });
    }
    const last = frames.at(-1);
    const firstText = ctx.provider.since(mark)[0]?.firstTextAt;
    if (response.status !== 200 || last?.event !== "run_completed" || firstDeltaAt === null || !firstText) {
      fail(ctx, `streamed run ${i + 1}: HTTP ${response.status}, last event ${last?.event ?? "none"}`);
      continue;
    }
    ttft.push(firstDeltaAt - firstText);
    /** @type {{ run_id?: string }} */
    const completed = JSON.parse(last.data);
    const runId = completed.run_id;
    const from = frames[0]?.id;
    const expected = frames.slice(1).map((frame) => frame.id);
    const startedAt = now();
    const replay = await fetch(`${ctx.agentry.origin}/v1/agents/${ctx.agentId}/runs/${runId}/events`, {
      headers: { authorization: `Bearer ${await ctx.tenant.tokenFor()}`, accept: "text/event-stream", "last-event-id": String(from) },
    });
    /** @type {(string | null)[]} */
    const replayed = [];
    /** @type {number | null} */
    let firstAt = null;
    if (replay.status === 200) {
      await readSse(replay, (frame) => {
        firstAt ??= frame.at;
        replayed.push(frame.id);
      });
    }
    if (firstAt === null || replayed.join() !== expected.join()) {
      fail(ctx, `reconnect to run ${runId}: HTTP ${replay.status}, replayed ${replayed.length} of ${expected.length} events`);
      continue;
    }
    reconnect.push(firstAt - startedAt);
  }
  return { samples: ttft.length, ttftP50: median(ttft), ttftP95: p95(ttft), reconnectP50: median(reconnect), reconnectP95: p95(reconnect) };
}

/**
 * What wrangler dev's proxy adds to every request: p50 (p95) of `GET /health` (no binding, no
 * auth) through the address `npm start` serves and straight to the Worker's own socket.
 * @param {BenchContext & { direct: string }} ctx
 * @param {number} samples
 */
export async function devProxyHop(ctx, samples) {
  /** @param {string} origin */
  const timed = async (origin) => {
    const times = await healthTimes(origin, samples + 5);
    if (times === null) {
      fail(ctx, `GET ${origin}/health did not answer 200`);
      return { p50: Number.NaN, p95: Number.NaN };
    }
    // The first five warm the connection.
    return { p50: median(times.slice(5)), p95: p95(times.slice(5)) };
  };
  return { proxied: await timed(ctx.agentry.origin), direct: await timed(ctx.direct) };
}
