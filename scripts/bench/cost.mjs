// What a run costs on Cloudflare (docs/performance.md, "What a run costs"): Agentry with its storage
// meter on (src/core/storage-meter.ts) counts the rows its session objects and D1 read and write,
// the calls into session objects and the queue messages; the bench adds the Worker requests it made,
// the runtime's CPU and the run's wall time, and prices them from cloudflare-prices.json.
import { readFileSync } from "node:fs";
import { readSse, runTurn } from "./agentry-client.mjs";
import { cpuDelta, groupCpu } from "./agentry-server.mjs";
import { TOOL_INPUT, TOOL_STEPS } from "./measures.mjs";
import { now, sleep, sum } from "./stats.mjs";

/** @import { TenantAt } from "./agentry-client.mjs" */

/**
 * @typedef {object} Prices Cloudflare's published prices, in USD per unit (cloudflare-prices.json).
 * @property {string} read
 * @property {string} plan
 * @property {string[]} sources
 * @property {Record<string, number>} usd
 */

/** @type {Prices} */
export const PRICES = JSON.parse(readFileSync(new URL("./cloudflare-prices.json", import.meta.url), "utf8"));

/** The typical run of issue 27: 5 tool steps, 6 model calls, a 75-word answer. */
export const COST_INPUT = `${TOOL_INPUT} [[words 75]]`;
/** The sampling rates of wrangler.toml: logs (`[observability]`) and traces (`[observability.traces]`). */
const WRANGLER = readFileSync(new URL("../../wrangler.toml", import.meta.url), "utf8");
const rateOf = (/** @type {RegExp} */ section) => Number(section.exec(WRANGLER)?.[1] ?? "1");
export const LOG_SAMPLING = rateOf(/\[observability\][^[]*?head_sampling_rate\s*=\s*([\d.]+)/);
export const TRACE_SAMPLING = rateOf(/\[observability\.traces\][^[]*?head_sampling_rate\s*=\s*([\d.]+)/);
/** Memory a Durable Object is billed for while it is active. */
const OBJECT_GB = 0.125;
/** Days a run's events and rows are kept (EVENT_RETENTION_DAYS), priced as one month of storage. */
const RETENTION_MONTHS = 1;

/**
 * @typedef {object} Meter the storage meter's reading (src/core/storage-meter.ts, MeterCounts)
 * @property {number} object_rows_read
 * @property {number} object_rows_written
 * @property {number} object_queries
 * @property {number} d1_rows_read
 * @property {number} d1_rows_written
 * @property {number} d1_queries
 * @property {number} d1_bytes
 * @property {number} objects
 * @property {number} object_bytes
 * @property {number} object_requests
 * @property {number} queue_messages
 * @property {Record<string, number>} writes_by_statement
 */

/**
 * @param {string} origin
 * @param {string} adminToken
 * @returns {Promise<Meter>}
 */
async function readMeter(origin, adminToken) {
  const response = await fetch(`${origin}/v1/admin/storage-meter`, { headers: { authorization: `Bearer ${adminToken}` } });
  if (response.status !== 200) throw new Error(`storage meter: HTTP ${response.status} (is STORAGE_METER on?)`);
  return /** @type {Promise<Meter>} */ (response.json());
}

/**
 * Readings summed until the work a run leaves behind (the outbox copied to D1, timers) is done:
 * until a reading 300 ms after the last shows nothing written.
 * @param {string} origin
 * @param {string} adminToken
 */
async function settle(origin, adminToken) {
  /** @type {Meter | null} */
  let total = null;
  for (let quiet = 0; quiet < 2; ) {
    const reading = await readMeter(origin, adminToken);
    const wrote = reading.object_rows_written + reading.d1_rows_written + reading.object_requests;
    if (total === null) total = reading;
    else {
      for (const key of /** @type {(keyof Meter)[]} */ (Object.keys(reading))) {
        if (key === "writes_by_statement") {
          for (const [statement, rows] of Object.entries(reading.writes_by_statement)) {
            total.writes_by_statement[statement] = (total.writes_by_statement[statement] ?? 0) + rows;
          }
        } else if (key === "d1_bytes") total.d1_bytes = reading.d1_bytes || total.d1_bytes;
        else if (key === "objects" || key === "object_bytes") total[key] = Math.max(total[key], reading[key]);
        else total[key] += reading[key];
      }
    }
    quiet = wrote === 0 ? quiet + 1 : 0;
    await sleep(300);
  }
  return /** @type {Meter} */ (total);
}

/**
 * One run of each kind; returns the Worker requests it made and the events it streamed (streamed only).
 * @param {TenantAt} tenant
 * @param {string} agentId
 * @param {"blocking" | "streamed" | "background"} kind
 */
async function oneRun(tenant, agentId, kind) {
  if (kind === "blocking") {
    const turn = await runTurn(tenant, agentId, COST_INPUT);
    if (turn.run?.status !== "completed") throw new Error(`blocking run: ${turn.status} ${JSON.stringify(turn.run).slice(0, 300)}`);
    return { requests: 1, events: null, modelCalls: turn.run.metrics?.model_calls ?? 0 };
  }
  if (kind === "streamed") {
    const response = await tenant.call("POST", `/v1/agents/${agentId}/runs`, { input: COST_INPUT, stream: true });
    if (response.status !== 200) throw new Error(`streamed run: HTTP ${response.status} ${await response.text()}`);
    let events = 0;
    /** @type {string | null} */
    let last = null;
    await readSse(response, (frame) => {
      events += 1;
      last = frame.event;
    });
    if (last !== "run_completed") throw new Error(`streamed run ended with ${last}`);
    return { requests: 1, events, modelCalls: TOOL_STEPS + 1 };
  }
  const started = await tenant.call("POST", `/v1/agents/${agentId}/runs`, { input: COST_INPUT, background: true });
  /** @type {{ run_id?: string }} */
  const accepted = await started.json();
  if (started.status !== 202 || !accepted.run_id) throw new Error(`background run: HTTP ${started.status} ${JSON.stringify(accepted)}`);
  const waited = await tenant.call("GET", `/v1/agents/${agentId}/runs/${accepted.run_id}?wait=60`);
  /** @type {{ status?: string, metrics?: { model_calls: number } }} */
  const run = await waited.json();
  if (run.status !== "completed") throw new Error(`background run: ${run.status}`);
  return { requests: 2, events: null, modelCalls: run.metrics?.model_calls ?? 0 };
}

/**
 * @typedef {object} RunCost what one kind of run costs, per run
 * @property {"blocking" | "streamed" | "background"} kind
 * @property {number} runs
 * @property {number} modelCalls
 * @property {number | null} events streamed events (streamed runs)
 * @property {Meter} meter per run
 * @property {number} workerRequests
 * @property {number} workerCpuMs the runtime's whole CPU (Worker, objects and local D1 together): an upper bound of the Worker's
 * @property {number} wallMs
 * @property {number} queueOperations
 * @property {number} d1BytesPerRun
 * @property {number} objectBytesPerSession
 * @property {number} spans the run's trace spans: one per invocation (Worker, object), SQL statement, D1 query and model call
 * @property {Record<string, number>} usd per line, per run
 * @property {number} usdPerRun
 */

/**
 * Measures `count` runs of one kind, one after another, each on a new session.
 * @param {{ agentry: { origin: string, group: number }, adminToken: string, tenant: TenantAt, agentId: string }} stack
 * @param {"blocking" | "streamed" | "background"} kind
 * @param {number} count
 * @returns {Promise<RunCost>}
 */
export async function measureCost(stack, kind, count) {
  const { agentry, adminToken, tenant, agentId } = stack;
  const before = await settle(agentry.origin, adminToken);
  const cpuBefore = groupCpu(agentry.group);
  /** @type {number[]} */
  const walls = [];
  let requests = 0;
  let modelCalls = 0;
  /** @type {number[]} */
  const events = [];
  for (let i = 0; i < count; i += 1) {
    const startedAt = now();
    const run = await oneRun(tenant, agentId, kind);
    walls.push(now() - startedAt);
    requests += run.requests;
    modelCalls += run.modelCalls;
    if (run.events !== null) events.push(run.events);
  }
  const total = await settle(agentry.origin, adminToken);
  const cpu = cpuDelta(cpuBefore, groupCpu(agentry.group));
  /** @type {Meter} */
  const meter = { ...total };
  for (const key of /** @type {(keyof Meter)[]} */ (Object.keys(meter))) {
    if (key === "writes_by_statement") {
      meter.writes_by_statement = Object.fromEntries(Object.entries(total.writes_by_statement).map(([k, rows]) => [k, rows / count]));
    } else if (key !== "d1_bytes" && key !== "objects" && key !== "object_bytes") meter[key] = total[key] / count;
  }
  // A background run's queue message is delivered to the consumer: one more Worker invocation each.
  const workerRequests = requests / count + total.queue_messages / count;
  const wallMs = sum(walls) / count;
  const queueOperations = (3 * total.queue_messages) / count;
  const d1BytesPerRun = before.d1_bytes > 0 && total.d1_bytes > 0 ? Math.max(0, total.d1_bytes - before.d1_bytes) / count : 0;
  const objectBytesPerSession = total.objects > 0 ? total.object_bytes / total.objects : 0;
  const p = PRICES.usd;
  const price = (/** @type {string} */ line) => {
    const value = p[line];
    if (value === undefined) throw new Error(`cloudflare-prices.json has no ${line}`);
    return value;
  };
  const invocations = workerRequests + meter.object_requests;
  const spans = invocations + meter.object_queries + meter.d1_queries + modelCalls / count;
  /** @type {Record<string, number>} */
  const usd = {
    "Worker requests": workerRequests * price("worker_request"),
    "Worker CPU": ((cpu?.total ?? 0) / count) * price("worker_cpu_ms"),
    "object requests": meter.object_requests * price("object_request"),
    "object duration": (wallMs / 1000) * OBJECT_GB * price("object_gb_second"),
    "object rows written": meter.object_rows_written * price("object_row_written"),
    "object rows read": meter.object_rows_read * price("object_row_read"),
    "object storage": (objectBytesPerSession / 1e9) * RETENTION_MONTHS * price("object_gb_month"),
    "D1 rows written": meter.d1_rows_written * price("d1_row_written"),
    "D1 rows read": meter.d1_rows_read * price("d1_row_read"),
    "D1 storage": (d1BytesPerRun / 1e9) * RETENTION_MONTHS * price("d1_gb_month"),
    "Queue operations": queueOperations * price("queue_operation"),
    // Invocation logs (one line per invocation; Agentry's own lines are few: a run's start and end).
    [`logs at ${LOG_SAMPLING * 100} %`]: invocations * LOG_SAMPLING * price("observability_event"),
    [`traces at ${TRACE_SAMPLING * 100} %`]: spans * TRACE_SAMPLING * price("observability_event"),
  };
  return {
    kind,
    runs: count,
    modelCalls: modelCalls / count,
    events: events.length > 0 ? sum(events) / events.length : null,
    meter,
    workerRequests,
    workerCpuMs: (cpu?.total ?? 0) / count,
    wallMs,
    queueOperations,
    d1BytesPerRun,
    objectBytesPerSession,
    spans,
    usd,
    usdPerRun: sum(Object.values(usd)),
  };
}
