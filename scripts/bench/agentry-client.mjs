// The bench's HTTP client of Agentry: one tenant, its keys rotated so that no token reaches the
// rate limit (300 requests per 10 s per token; every key of a tenant sees the same data).
import { now } from "./stats.mjs";

const REQUESTS_PER_KEY = 200;

/** @typedef {(method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<Response>} Call */
/** @typedef {{ tokenFor: (count?: number) => Promise<string>, call: Call }} TenantAt A tenant's calls to one address of Agentry. */
/** @typedef {TenantAt & { at: (base: string) => TenantAt }} Tenant */

/**
 * A tenant of a running Agentry, with helpers for the routes the bench calls.
 * @param {string} origin
 * @param {string} adminToken
 * @param {string} tenant
 * @returns {Promise<Tenant>}
 */
export async function createTenant(origin, adminToken, tenant) {
  /** @type {string | null} */
  let token = null;
  let used = 0;
  let keys = 0;
  const newToken = async () => {
    keys += 1;
    const response = await fetch(`${origin}/v1/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ tenant, name: `bench-${keys}` }),
    });
    if (response.status !== 201) throw new Error(`POST /v1/keys: ${response.status} ${await response.text()}`);
    /** @type {{ key: string }} */
    const created = await response.json();
    return created.key;
  };
  /** A token with room for `count` more requests in this window. */
  const tokenFor = async (count = 1) => {
    if (token === null || used + count > REQUESTS_PER_KEY) {
      token = await newToken();
      used = 0;
    }
    used += count;
    return token;
  };
  /** @param {string} base @returns {Call} */
  const callAt =
    (base) =>
    async (method, path, body, headers = {}) =>
      fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${await tokenFor()}`, "content-type": "application/json", ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
  /** The same tenant calling another address of the same Agentry (its Worker's own socket). */
  /** @param {string} base */
  const at = (base) => ({ tokenFor, call: callAt(base) });
  return { tokenFor, call: callAt(origin), at };
}

/**
 * Creates an anthropic agent with the builtin `current_time` that calls the fake provider.
 * @param {TenantAt} tenant
 * @param {string} providerOrigin
 * @returns {Promise<string>} the agent's id
 */
export async function createAgent(tenant, providerOrigin) {
  const response = await tenant.call("POST", "/v1/agents", {
    name: "bench",
    provider: "anthropic",
    model: "claude-bench",
    base_url: providerOrigin,
    tools: [{ type: "builtin", name: "current_time" }],
  });
  if (response.status !== 201) throw new Error(`POST /v1/agents: ${response.status} ${await response.text()}`);
  /** @type {{ id: string }} */
  const agent = await response.json();
  return agent.id;
}

/**
 * What the bench reads of a Run object (the runs endpoint's JSON; an error answer has only `error`).
 * @typedef {object} Run
 * @property {string} [id]
 * @property {string} [status]
 * @property {unknown} [output] the final text, for the bench's agent
 * @property {{ model_calls: number, tool_calls: number }} [metrics]
 * @property {{ type?: string, message?: string, details?: { active_run_id?: string } } | null} [error]
 */

/**
 * Starts a turn and waits for the Run object (stream: false). Returns its times, status and body.
 * @param {TenantAt} tenant
 * @param {string} agentId
 * @param {string} input
 * @param {Record<string, unknown>} [extra] more fields of the request body
 */
export async function runTurn(tenant, agentId, input, extra = {}) {
  const startedAt = now();
  let status = 0;
  /** @type {Run | null} */
  let run = null;
  /** @type {string | null} */
  let error = null;
  try {
    const response = await tenant.call("POST", `/v1/agents/${agentId}/runs`, { input, ...extra });
    status = response.status;
    const text = await response.text();
    try {
      run = JSON.parse(text);
    } catch {
      error = `not JSON: ${text.slice(0, 200)}`;
    }
  } catch (e) {
    error = e instanceof Error ? e.message : String(e);
  }
  return { startedAt, endedAt: now(), status, run, error };
}

/** @typedef {{ id: string | null, event: string | null, data: string, at: number }} SseFrame */

/**
 * Reads an SSE response frame by frame, calling `onFrame({ id, event, data, at })` for each;
 * resolves when the stream ends or `onFrame` returns true.
 * @param {Response} response
 * @param {(frame: SseFrame) => boolean | undefined | void} onFrame
 */
export async function readSse(response, onFrame) {
  const decoder = new TextDecoder();
  let buffer = "";
  if (!response.body) throw new TypeError("readSse: the response has no body");
  for await (const chunk of response.body) {
    const at = now();
    buffer += decoder.decode(chunk, { stream: true });
    for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
      const raw = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      /** @type {SseFrame} */
      const frame = { id: null, event: null, data: "", at };
      for (const line of raw.split("\n")) {
        if (line.startsWith("id:")) frame.id = line.slice(3).trim();
        else if (line.startsWith("event:")) frame.event = line.slice(6).trim();
        else if (line.startsWith("data:")) frame.data += line.slice(5).trim();
      }
      if (frame.event === null && frame.data === "") continue; // a `: ping` comment
      if (onFrame(frame) === true) {
        await response.body.cancel().catch(() => {});
        return;
      }
    }
  }
}
