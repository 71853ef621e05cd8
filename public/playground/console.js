// @ts-check
// The playground console (served as a static asset; type-checked by `npm run typecheck`, tsconfig.browser.json).
// Plain DOM and fetch: the API's SSE streams need an Authorization header, which EventSource cannot send.

/** @typedef {{ seq: number, type: string, run_id: string, session_id: string, data: any }} AgentryEvent */

const MOCK_AGENT_ID = "playground";
const MOCK_AGENT = {
  id: MOCK_AGENT_ID,
  name: "Playground (offline model)",
  provider: "mock",
  model: "mock-1",
  instructions: "You are helpful.",
  retries: 2,
  delay_between_retries: 0.5,
  tools: [
    { type: "builtin", name: "current_time" },
    {
      type: "client",
      name: "ask_user",
      description: "Ask the person at the console a question",
      parameters: { type: "object", properties: { question: { type: "string" } } },
    },
  ],
};
const TERMINAL = ["run_completed", "run_error", "run_cancelled", "run_paused"];
const STORE = "agentry-playground";

/** @param {string} id */
const $ = (id) => /** @type {any} */ (document.getElementById(id));

/** What survives a reload: the token, the chosen agent and session, and the run being watched. */
const state = {
  agentId: "",
  sessionId: "",
  /** @type {string | null} */ runId: null,
  lastSeq: 0,
  usage: { input: 0, output: 0, cost: 0, costUnknown: false, retries: 0, tools: 0 },
  /** @type {AbortController | null} */ stream: null,
  /** What holds the session's turn: a running run, a paused one, or nothing. @type {"running" | "paused" | null} */ busy: null,
};

function save() {
  const { agentId, sessionId, runId, lastSeq } = state;
  localStorage.setItem(STORE, JSON.stringify({ agentId, sessionId, runId, lastSeq }));
}

function headers() {
  return { "content-type": "application/json", authorization: "Bearer " + $("token").value.trim() };
}

/** @param {string} text @param {"muted" | "error" | "ok"} [kind] */
function setStatus(text, kind = "muted") {
  $("status").textContent = text;
  $("status").className = kind;
}

/** Shows an error in the status line. @param {unknown} error */
function showError(error) {
  setStatus(String(error instanceof Error ? error.message : error), "error");
}

/** @param {Response} response */
async function errorText(response) {
  try {
    const body = await response.json();
    return response.status + " " + body.error.type + ": " + body.error.message;
  } catch {
    return "HTTP " + response.status;
  }
}

/** A JSON call to the API; throws the API's error text on a non-2xx answer. @param {string} path @param {any} [body] */
async function api(path, body, method = body === undefined ? "GET" : "POST") {
  const response = await fetch(path, { method, headers: headers(), body: body === undefined ? undefined : JSON.stringify(body) });
  if (!response.ok) throw new Error(await errorText(response));
  return response.status === 204 ? null : response.json();
}

const runsPath = () => "/v1/agents/" + encodeURIComponent(state.agentId) + "/runs";
/** @param {string} runId */
const runPath = (runId) => runsPath() + "/" + encodeURIComponent(runId);

// ---- agents and sessions -------------------------------------------------------------------------------------

async function loadAgents() {
  const page = await api("/v1/agents?limit=100");
  const select = $("agent");
  select.replaceChildren(new Option("— pick an agent —", ""));
  for (const agent of page.data) select.add(new Option(agent.name + " (" + agent.id + ", " + agent.provider + ")", agent.id));
  select.value = page.data.some((/** @type {any} */ a) => a.id === state.agentId) ? state.agentId : "";
  state.agentId = select.value;
}

/** The playground's mock agent: created once with a fixed id, then reused. */
async function useMockAgent() {
  const response = await fetch("/v1/agents/" + MOCK_AGENT_ID, { headers: headers() });
  if (response.status === 404) await api("/v1/agents", MOCK_AGENT);
  else if (!response.ok) throw new Error(await errorText(response));
  state.agentId = MOCK_AGENT_ID;
  await loadAgents();
  await chooseAgent(MOCK_AGENT_ID);
}

/** @param {string} agentId */
async function chooseAgent(agentId) {
  if (agentId !== state.agentId) state.sessionId = "";
  state.agentId = agentId;
  $("agent").value = agentId;
  save();
  await loadSessions();
}

async function loadSessions() {
  const select = $("session");
  $("send").disabled = !state.agentId;
  const options = [new Option("+ new session", "")];
  if (state.agentId) {
    // The list is read before the select changes: while it loads, the select keeps showing the current session.
    const page = await api("/v1/sessions?limit=50&agent_id=" + encodeURIComponent(state.agentId));
    for (const session of page.data) {
      const label = session.id + " · " + session.run_count + " run(s)" + (session.active_run_id ? " · active" : "");
      options.push(new Option(label, session.id));
    }
    if (state.sessionId && !page.data.some((/** @type {any} */ s) => s.id === state.sessionId)) {
      options.push(new Option(state.sessionId, state.sessionId));
    }
  }
  select.replaceChildren(...options);
  select.value = state.sessionId;
}

/** Picks a session; when it has a run under way (or paused), attaches to it. @param {string} sessionId */
async function chooseSession(sessionId) {
  stopFollowing();
  state.sessionId = sessionId;
  state.runId = null;
  save();
  $("transcript").replaceChildren();
  await refreshSession();
}

/**
 * Reads the session again: its queued runs, and the run holding its turn. When the page follows no
 * stream, a run holding the turn other than the one shown (a queued run that started) is followed.
 */
async function refreshSession() {
  const sessionId = state.sessionId;
  const session = sessionId ? await api("/v1/sessions/" + encodeURIComponent(sessionId)) : null;
  if (state.sessionId !== sessionId) return; // another session was picked meanwhile
  showQueue(session?.queued_run_ids ?? []);
  if (state.stream) return;
  const active = session?.active_run_id ?? null;
  if (active && active !== state.runId) return attach(active, 0);
  setBusy(active ? "paused" : null);
  await Promise.all([loadSessions(), showTranscript()]);
}

/** The session's queued runs, first in line first, each with a cancel button. @param {string[]} runIds */
function showQueue(runIds) {
  const list = $("queue");
  list.replaceChildren();
  for (const runId of runIds) {
    const item = document.createElement("li");
    item.textContent = runId + " queued";
    item.dataset.runId = runId;
    const button = document.createElement("button");
    button.textContent = "Cancel";
    button.addEventListener("click", guarded(async () => {
      button.disabled = true;
      await api(runPath(runId) + "/cancel", {});
      await refreshSession();
    }));
    item.appendChild(button);
    list.appendChild(item);
  }
}

// ---- runs ----------------------------------------------------------------------------------------------------

function clearRunView() {
  $("output").textContent = "";
  $("activity").replaceChildren();
  $("events").replaceChildren();
  $("actions").replaceChildren();
  state.usage = { input: 0, output: 0, cost: 0, costUnknown: false, retries: 0, tools: 0 };
  showMetrics();
}

/**
 * While a run holds the session, a message is sent with the chosen `on_busy`: steer by default
 * while the run goes on, queue while it is paused (a steer would be queued anyway).
 * @param {"running" | "paused" | null} busy
 */
function setBusy(busy) {
  if (busy !== state.busy) $("on-busy").value = busy === "paused" ? "enqueue" : "steer";
  state.busy = busy;
  $("send").disabled = !state.agentId;
  $("cancel").disabled = busy === null;
  $("on-busy").disabled = busy === null;
}

/** A new stream for the page to follow; the one it followed before is dropped (its run goes on server-side). */
function followNew() {
  stopFollowing();
  state.stream = new AbortController();
  return state.stream;
}

function stopFollowing() {
  state.stream?.abort();
  state.stream = null;
}

/** Starts a turn (or a continuation) whose answer is an SSE stream, and follows it. @param {string} path @param {any} body */
async function startStream(path, body) {
  const controller = followNew();
  clearRunView();
  state.runId = null; // until the new run's first event names it
  setBusy("running");
  setStatus("running…");
  try {
    const response = await fetch(path, { method: "POST", headers: headers(), body: JSON.stringify({ ...body, stream: true }), signal: controller.signal });
    if (!response.ok) throw new Error(await errorText(response));
    await follow(response, controller);
  } catch (error) {
    failed(error);
  }
}

/**
 * Follows a run's stored and live events (`events?after=`): after a reload (after 0, the whole run again)
 * or after a dropped stream (after the last seq seen). @param {string} runId @param {number} after
 */
async function attach(runId, after) {
  const controller = followNew();
  if (after === 0) clearRunView();
  state.runId = runId;
  save();
  setBusy("running");
  setStatus("re-attached to " + runId + "…");
  try {
    const response = await fetch(runPath(runId) + "/events?after=" + after, {
      headers: { ...headers(), accept: "text/event-stream" },
      signal: controller.signal,
    });
    if (!response.ok) throw new Error(await errorText(response));
    await follow(response, controller);
  } catch (error) {
    failed(error);
  }
}

/** @param {Response} response @param {AbortController} controller */
async function follow(response, controller) {
  let ended = false;
  await readEvents(/** @type {ReadableStream<any>} */ (response.body), (event) => {
    onEvent(event);
    if (TERMINAL.includes(event.type)) ended = true;
  });
  if (state.stream !== controller) return; // another stream took over
  state.stream = null;
  // The stream closed before the run's terminal event: the run goes on server-side; pick it up where we left off.
  if (!ended && state.runId) return attach(state.runId, state.lastSeq);
  save();
  await refreshSession();
}

/** A stream the page followed failed (a dropped one it gave up itself is no error). @param {unknown} error */
function failed(error) {
  if (error instanceof DOMException && error.name === "AbortError") return;
  state.stream = null;
  setBusy(null);
  showError(error);
}

/** @param {AgentryEvent} event */
function onEvent(event) {
  const { type, data = {} } = event;
  state.lastSeq = Math.max(state.lastSeq, event.seq || 0);
  if (event.run_id) state.runId = event.run_id;
  if (event.session_id && event.session_id !== state.sessionId) {
    state.sessionId = event.session_id;
    const select = $("session");
    if (![...select.options].some((o) => o.value === event.session_id)) select.add(new Option(event.session_id, event.session_id));
    select.value = event.session_id;
  }
  save();
  logEvent(event);
  switch (type) {
    case "content_delta":
      $("output").textContent += data.text;
      break;
    case "retry":
    case "output_repair":
      // The text of a failed attempt, or of an answer held back for a repair, is void.
      $("output").textContent = "";
      state.usage.retries += 1;
      note("retry", "attempt " + data.attempt + " of step " + data.step + " failed" + (data.error ? " (" + data.error.type + ": " + data.error.message + ")" : "") + "; retrying in " + data.delay_ms + " ms");
      break;
    case "tool_call_started":
      state.usage.tools += 1;
      note("tool", "→ " + data.name + " " + JSON.stringify(data.arguments));
      break;
    case "tool_call_completed":
      note("tool", "← " + data.name + " returned " + (typeof data.output === "string" ? data.output : JSON.stringify(data.output)) + " (" + data.duration_ms + " ms)");
      break;
    case "tool_call_error":
      note("error", "✗ " + data.name + ": " + JSON.stringify(data.error));
      break;
    case "checkpoint":
      checkpointNote(event.run_id, data.checkpoint_id, data.step);
      break;
    case "compaction":
      note("info", "compacted " + data.compacted_messages + " messages (" + data.tokens_before + " → " + data.tokens_after + " tokens)");
      break;
    case "model_request_completed":
      state.usage.input += data.usage?.input_tokens ?? 0;
      state.usage.output += data.usage?.output_tokens ?? 0;
      if (data.cost_usd === null || data.cost_usd === undefined) state.usage.costUnknown = true;
      else state.usage.cost += data.cost_usd;
      break;
    case "run_continued":
      note("info", "continued" + (data.from_checkpoint ? " from " + data.from_checkpoint : ""));
      $("actions").replaceChildren();
      setStatus("running…");
      break;
    case "run_completed":
      // The run's answer: the text of its last step (or the structured output), without earlier steps' text.
      if (data.output !== undefined && data.output !== null) {
        $("output").textContent = typeof data.output === "string" ? data.output : JSON.stringify(data.output, null, 2);
      }
      if (data.metrics) {
        state.usage.input = data.metrics.input_tokens;
        state.usage.output = data.metrics.output_tokens;
        if (typeof data.metrics.cost_usd === "number" && !state.usage.costUnknown) state.usage.cost = data.metrics.cost_usd;
      }
      setStatus("completed · run " + event.run_id, "ok");
      break;
    case "run_paused": {
      const actions = data.required_actions || [];
      const approval = actions.some((/** @type {any} */ a) => a.type === "approval");
      setStatus(approval ? "paused: a tool call waits for approval" : "paused: the agent asks for a client tool", "muted");
      showRequiredActions(event.run_id, actions);
      setBusy("paused");
      break;
    }
    case "approval_requested":
      note("approval", "? " + data.name + " " + JSON.stringify(data.arguments) + " waits for approval");
      break;
    case "approval_decided":
      note("approval", (data.approve ? "✓ approved" : "✗ denied" + (data.reason ? ": " + data.reason : "")) + " by " + data.key_id + " (" + data.source + ")");
      break;
    case "input_steered":
      steerNote(data.steer_id, "steer " + data.steer_id + " joined the run: " + inputText(data.input));
      break;
    case "steer_queued":
      steerNote(data.steer_id, "steer " + data.steer_id + " became the queued run " + data.queued_as);
      refreshSession().catch(showError);
      break;
    case "run_queued":
      note("info", "queued (position " + data.position + ")");
      setStatus("queued · run " + event.run_id);
      refreshSession().catch(showError);
      break;
    case "run_cancelled":
      setStatus("cancelled" + (data.reason ? " (" + data.reason + ")" : "") + " · run " + event.run_id, "error");
      break;
    case "run_error":
      setStatus("error: " + (data.error ? data.error.type + ": " + data.error.message : "?"), "error");
      break;
  }
  showMetrics();
}

function showMetrics() {
  const u = state.usage;
  $("metrics").textContent =
    "tokens in " + u.input + " · out " + u.output + " · cost " + (u.costUnknown ? "unknown (no price for this model)" : "$" + u.cost.toFixed(6)) + " · tool calls " + u.tools + " · retries " + u.retries;
}

/** @param {AgentryEvent} event */
function logEvent(event) {
  const line = document.createElement("div");
  line.textContent = event.seq + " " + event.type + " " + JSON.stringify(event.data ?? {});
  $("events").appendChild(line);
}

/** @param {string} kind @param {string} text */
function note(kind, text) {
  const item = document.createElement("li");
  item.className = kind;
  item.textContent = text;
  $("activity").appendChild(item);
  return item;
}

/** The activity line of a steer, if it is shown. @param {string} steerId */
const steerLine = (steerId) => [...$("activity").querySelectorAll(".steer")].find((item) => item.dataset.steerId === steerId);

/** The one line of a steer, added or brought up to date. @param {string} steerId @param {string} text */
function steerNote(steerId, text) {
  const item = steerLine(steerId) ?? note("steer", "");
  item.dataset.steerId = steerId;
  item.textContent = text;
}

/** A run's input as text: a string, or the text of its content blocks and messages. @param {any} input @returns {string} */
function inputText(input) {
  if (typeof input === "string") return input;
  if (Array.isArray(input)) return input.map(inputText).join(" ");
  if (input?.type === "text") return input.text;
  if (input?.content !== undefined) return inputText(input.content);
  return "[" + (input?.type ?? "?") + "]";
}

/** A checkpoint line with a "Fork here" button: a new run branched from that step. @param {string} runId @param {string} checkpointId @param {number} step */
function checkpointNote(runId, checkpointId, step) {
  const item = note("checkpoint", "checkpoint " + checkpointId + " (step " + step + ") ");
  const button = document.createElement("button");
  button.textContent = "Fork here";
  button.className = "fork";
  button.dataset.checkpoint = checkpointId;
  button.addEventListener("click", () => {
    const input = $("input").value.trim();
    startStream(runPath(runId) + "/continue", { continue_from: checkpointId, fork: true, ...(input ? { input } : {}) });
  });
  item.appendChild(button);
}

/**
 * A paused run's pending actions, all answered in one `continue`: Approve / Deny for each approval,
 * a result field for each client tool call. With no client tool pending, the last decision sends it;
 * otherwise "Continue" does, once every approval is decided. @param {string} runId @param {any[]} actions
 */
function showRequiredActions(runId, actions) {
  const box = $("actions");
  box.replaceChildren();
  const approvals = actions.filter((action) => action.type === "approval");
  const labels = actions.filter((action) => action.type !== "approval").map(resultField);
  const fields = labels.map((label) => /** @type {HTMLTextAreaElement} */ (label.querySelector("textarea")));
  /** @type {Map<string, { tool_call_id: string, approve: boolean, reason?: string }>} */
  const decisions = new Map();
  const submit = () => {
    const tool_results = fields.map((field) => ({ tool_call_id: field.dataset.toolCallId, output: field.value }));
    const decided = [...decisions.values()];
    startStream(runPath(runId) + "/continue", { ...(decided.length ? { approvals: decided } : {}), ...(fields.length ? { tool_results } : {}) });
  };
  const button = document.createElement("button");
  button.id = "continue";
  button.textContent = "Continue with these results";
  button.disabled = approvals.length > 0;
  button.addEventListener("click", submit);
  for (const action of approvals) {
    box.appendChild(
      approvalRequest(action, (decision) => {
        decisions.set(decision.tool_call_id, decision);
        const ready = decisions.size === approvals.length;
        if (ready && fields.length === 0) submit();
        button.disabled = !ready;
      }),
    );
  }
  box.append(...labels);
  if (fields.length) box.appendChild(button);
}

/** A client tool call's result field. @param {any} action */
function resultField(action) {
  const label = document.createElement("label");
  label.textContent = action.name + " " + JSON.stringify(action.arguments) + " → result:";
  const field = document.createElement("textarea");
  field.rows = 2;
  field.dataset.toolCallId = action.tool_call_id;
  label.appendChild(field);
  return label;
}

/**
 * A tool call waiting for approval: its name and arguments, Approve, Deny and an optional reason for a denial.
 * @param {any} action @param {(decision: { tool_call_id: string, approve: boolean, reason?: string }) => void} decide
 */
function approvalRequest(action, decide) {
  const row = document.createElement("div");
  row.className = "approval-request";
  row.dataset.toolCallId = action.tool_call_id;
  const call = document.createElement("code");
  call.textContent = action.name + " " + JSON.stringify(action.arguments);
  const reason = document.createElement("input");
  reason.placeholder = "reason (for a denial, optional)";
  reason.className = "reason";
  const approve = document.createElement("button");
  approve.textContent = "Approve";
  approve.className = "approve";
  const deny = document.createElement("button");
  deny.textContent = "Deny";
  deny.className = "deny";
  /** @param {boolean} yes */
  const choose = (yes) => {
    approve.disabled = deny.disabled = reason.disabled = true;
    row.classList.add(yes ? "approved" : "denied");
    const text = reason.value.trim();
    decide({ tool_call_id: action.tool_call_id, approve: yes, ...(!yes && text ? { reason: text } : {}) });
  };
  approve.addEventListener("click", () => choose(true));
  deny.addEventListener("click", () => choose(false));
  row.append("Approve this call? ", call, approve, deny, reason);
  return row;
}

async function showTranscript() {
  const box = $("transcript");
  const sessionId = state.sessionId;
  if (!sessionId) return box.replaceChildren();
  const transcript = await api("/v1/sessions/" + encodeURIComponent(sessionId) + "/transcript");
  // Another session was picked while this one loaded (a run's end refreshes the transcript): it is not shown.
  if (state.sessionId !== sessionId) return;
  box.replaceChildren();
  for (const message of transcript.data) {
    const item = document.createElement("div");
    item.className = "message " + message.role;
    const parts = message.content.map((/** @type {any} */ block) => {
      if (block.type === "text" || block.type === "summary") return block.text;
      if (block.type === "tool_call") return "[call " + block.name + " " + JSON.stringify(block.arguments) + "]";
      if (block.type === "tool_result") return "[result " + JSON.stringify(block.output) + "]";
      return "[" + block.type + " " + (block.media_type ?? "") + "]";
    });
    item.textContent = message.role + ": " + parts.join(" ");
    box.appendChild(item);
  }
}

/** Sends the message box: a new turn, or, while the session is busy, with the chosen `on_busy`. */
async function send() {
  const body = { input: $("input").value, ...(state.sessionId ? { session_id: state.sessionId } : {}) };
  const onBusy = state.busy && state.sessionId ? $("on-busy").value : null;
  if (onBusy === "steer") return steer(body);
  if (onBusy === "enqueue") return enqueue(body);
  return startStream(runsPath(), onBusy ? { ...body, on_busy: onBusy } : body);
}

/** Joins the running run (answered 202 at once); the line stays pending until the run's events show the steer. @param {any} body */
async function steer(body) {
  const { steer_id, run_id, steered_into } = await api(runsPath(), { ...body, on_busy: "steer" });
  if (steered_into !== run_id) {
    // The run had stopped (paused): the steer is a queued run.
    steerNote(steer_id, "steer " + steer_id + " became the queued run " + steered_into);
    return refreshSession();
  }
  if (!steerLine(steer_id)) steerNote(steer_id, "steer " + steer_id + " pending: " + inputText(body.input));
}

/** Queues the message behind the session's runs (`background`: the answer is 202 at once). @param {any} body */
async function enqueue(body) {
  const queued = await api(runsPath(), { ...body, on_busy: "enqueue", background: true });
  note("info", "queued " + queued.run_id + " (" + queued.status + ")");
  await refreshSession();
}

// One SSE frame per event: "id:", "event:", "data:" lines, a blank line after; ": ping" is a comment.
/** @param {ReadableStream<any>} stream @param {(event: AgentryEvent) => void} handle */
async function readEvents(stream, handle) {
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value.replace(/\r\n?/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let data = "";
      for (const line of frame.split("\n")) if (line.startsWith("data:")) data += line.slice(5).replace(/^ /, "");
      if (data) handle(JSON.parse(data));
    }
  }
}

// ---- wiring --------------------------------------------------------------------------------------------------

/** Runs an action of a button, showing its error in the status line. @param {() => Promise<unknown>} action */
const guarded = (action) => () => action().catch(failed);

$("token").addEventListener("change", guarded(async () => {
  localStorage.setItem(STORE + "-token", $("token").value);
  await loadAgents();
  await loadSessions();
}));
$("mock").addEventListener("click", guarded(useMockAgent));
$("agent").addEventListener("change", guarded(() => chooseAgent($("agent").value)));
$("session").addEventListener("change", guarded(() => chooseSession($("session").value)));
$("show-transcript").addEventListener("click", guarded(showTranscript));
$("send").addEventListener("click", () => send().catch(showError));
$("cancel").addEventListener("click", guarded(async () => {
  if (!state.runId) return;
  const run = await api(runPath(state.runId) + "/cancel", {});
  setStatus(run.status + " · run " + run.id, run.status === "cancelled" ? "error" : "muted");
  if (!state.stream) await refreshSession(); // a paused run: no stream brings its end
}));

/** On load: the saved token, agent and session; a run that was under way is followed again. */
async function restore() {
  $("token").value = localStorage.getItem(STORE + "-token") || "";
  const saved = JSON.parse(localStorage.getItem(STORE) || "{}");
  state.agentId = saved.agentId || "";
  state.sessionId = saved.sessionId || "";
  showMetrics();
  if (!$("token").value) return setStatus("paste a token to start (see the hint above)");
  await loadAgents();
  await loadSessions();
  if (!state.agentId || !state.sessionId) return setStatus("ready");
  setStatus("ready");
  await refreshSession();
}
restore().catch(failed);
