/**
 * The playground served at `GET /`: one self-contained page (no build step, no external
 * network) that creates a mock agent and streams a turn from it over SSE.
 */
export const PLAYGROUND_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Agentry playground</title>
<style>
  body { font: 15px/1.5 system-ui, sans-serif; max-width: 46rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
  input, textarea, button { font: inherit; padding: .4rem .6rem; border: 1px solid #bbb; border-radius: 6px; }
  input, textarea { width: 100%; box-sizing: border-box; }
  button { cursor: pointer; background: #f3f3f3; } button:disabled { opacity: .5; cursor: default; }
  .row { display: flex; gap: .5rem; align-items: center; margin: .6rem 0; }
  #output { white-space: pre-wrap; background: #f7f7f9; border-radius: 6px; padding: .8rem; min-height: 3rem; }
  #events { font: 12px/1.4 ui-monospace, monospace; color: #555; max-height: 14rem; overflow: auto; }
  .muted { color: #777; font-size: 13px; } .error { color: #b00020; }
</style>
</head>
<body>
<h1>Agentry playground</h1>
<p class="muted">Runs a turn against the offline model (<code>provider: "mock"</code>). Try
<code>Hello there [[slow 50]]</code>. See also <a href="/docs">the API reference</a>.</p>
<label>Token <input id="token" type="password" placeholder="ADMIN_TOKEN or a tenant key" autocomplete="off"></label>
<div class="row"><button id="create">Create mock agent</button><span id="agent" class="muted">no agent yet</span></div>
<label>Message <textarea id="input" rows="3">Hello there [[slow 30]]</textarea></label>
<div class="row"><button id="run" disabled>Run (stream)</button><span id="status" class="muted"></span></div>
<div id="output"></div>
<h3>Events</h3>
<div id="events"></div>
<script>
const $ = (id) => document.getElementById(id);
const state = { agentId: null, sessionId: null };
$("token").value = localStorage.getItem("agentry-token") || "";
$("token").addEventListener("change", () => localStorage.setItem("agentry-token", $("token").value));

function headers() {
  return { "content-type": "application/json", authorization: "Bearer " + $("token").value.trim() };
}
function setStatus(text, isError) {
  $("status").textContent = text;
  $("status").className = isError ? "error" : "muted";
}
async function errorText(response) {
  try { const body = await response.json(); return response.status + " " + body.error.type + ": " + body.error.message; }
  catch { return "HTTP " + response.status; }
}

$("create").addEventListener("click", async () => {
  setStatus("creating agent…");
  const response = await fetch("/v1/agents", {
    method: "POST", headers: headers(),
    body: JSON.stringify({ name: "Playground", provider: "mock", model: "mock-1", instructions: "You are helpful." }),
  });
  if (!response.ok) return setStatus(await errorText(response), true);
  const agent = await response.json();
  state.agentId = agent.id; state.sessionId = null;
  $("agent").textContent = "agent " + agent.id + " (version " + agent.version + ")";
  $("run").disabled = false;
  setStatus("ready");
});

$("run").addEventListener("click", async () => {
  $("run").disabled = true; $("output").textContent = ""; $("events").textContent = "";
  setStatus("running…");
  try {
    const body = { input: $("input").value, stream: true };
    if (state.sessionId) body.session_id = state.sessionId;
    const response = await fetch("/v1/agents/" + encodeURIComponent(state.agentId) + "/runs", {
      method: "POST", headers: headers(), body: JSON.stringify(body),
    });
    if (!response.ok) return setStatus(await errorText(response), true);
    await readEvents(response.body, onEvent);
  } catch (error) {
    setStatus(String(error), true);
  } finally {
    $("run").disabled = false;
  }
});

function onEvent(type, envelope) {
  const line = document.createElement("div");
  line.textContent = (envelope.seq ?? "") + " " + type + " " + JSON.stringify(envelope.data ?? {});
  $("events").appendChild(line);
  if (envelope.session_id) state.sessionId = envelope.session_id;
  const data = envelope.data || {};
  if (type === "content_delta") $("output").textContent += data.text;
  // The text of a failed attempt, or of an answer held back for a repair, is void.
  if (type === "retry" || type === "output_repair") $("output").textContent = "";
  if (type === "run_completed") setStatus("completed; session " + state.sessionId);
  if (type === "run_paused") setStatus("paused: the agent asked for a client tool");
  if (type === "run_cancelled") setStatus("cancelled", true);
  if (type === "run_error") setStatus("error: " + (data.error ? data.error.type + ": " + data.error.message : "?"), true);
}

// One SSE frame per event: "id:", "event:", "data:" lines, a blank line after; ": ping" is a comment.
async function readEvents(stream, handle) {
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value.replace(/\\r\\n?/g, "\\n");
    let end;
    while ((end = buffer.indexOf("\\n\\n")) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let type = "message", data = "";
      for (const line of frame.split("\\n")) {
        if (line.startsWith("event:")) type = line.slice(6).trim();
        else if (line.startsWith("data:")) data += line.slice(5).replace(/^ /, "");
      }
      if (data) handle(type, JSON.parse(data));
    }
  }
}
</script>
</body>
</html>
`;
