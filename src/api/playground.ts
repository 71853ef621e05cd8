/**
 * The playground served at `GET /`: a small console over the API (no build step, no external network).
 * Its script, style sheet and icon are static assets in `public/` (wrangler.toml `[assets]`);
 * the script is type-checked with tsconfig.browser.json.
 */
export const PLAYGROUND_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Agentry playground</title>
<link rel="icon" href="/favicon.ico">
<link rel="stylesheet" href="/playground/console.css">
<script type="module" src="/playground/console.js"></script>
</head>
<body>
<h1>Agentry playground</h1>
<p class="muted">A console over the API. See also <a href="/docs">the API reference</a>.</p>
<label>Token <input id="token" type="password" placeholder="ADMIN_TOKEN or a tenant key" autocomplete="off"></label>
<p class="hint" id="token-hint">Running locally with <code>npm start</code>? The admin token is <code>ADMIN_TOKEN</code> in
<code>.dev.vars</code> at the repository's root (<code>npm start</code> creates it with <code>dev-admin-token</code>).
The token is kept in this browser's local storage only.</p>
<div class="row">
  <select id="agent" aria-label="Agent"><option value="">— pick an agent —</option></select>
  <button id="mock">Use the mock agent</button>
  <select id="session" aria-label="Session"><option value="">+ new session</option></select>
  <button id="show-transcript">Transcript</button>
</div>
<p class="muted">The mock agent runs the offline model with the <code>current_time</code> tool and a client tool
<code>ask_user</code>. Try <code>Hello there [[slow 50]]</code>, <code>[[tool current_time {}]] What time is it?</code>,
<code>[[tool ask_user {"question":"Name?"}]] Hi</code> (the run pauses for your answer) or
<code>[[fail 529 x1]] Hi</code> (a retry). While a run holds the session, Send steers it, queues the message or
interrupts the run ("while busy"); a tool with <code>requires_approval</code> pauses the run for Approve / Deny.</p>
<label>Message <textarea id="input" rows="3">Hello there [[slow 30]]</textarea></label>
<div class="row"><button id="send" disabled>Send (stream)</button>
<label class="inline" title="While a run holds the session: what a new message does (on_busy)">while busy
<select id="on-busy" disabled><option value="steer">steer</option><option value="enqueue">queue</option>
<option value="interrupt">interrupt</option></select></label>
<button id="cancel" disabled>Cancel</button>
<span id="status" class="muted"></span></div>
<div id="metrics"></div>
<ol id="queue" aria-label="Queued runs"></ol>
<div class="columns">
  <section><h2>Answer</h2><div id="output"></div><div id="actions"></div>
  <h2>Transcript</h2><div id="transcript"></div></section>
  <section><h2>Tool calls, approvals, steers, checkpoints</h2><ul id="activity"></ul></section>
</div>
<details><summary>Events</summary><div id="events"></div></details>
</body>
</html>
`;
