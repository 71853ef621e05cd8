// `npm run test:browser`: the playground (`/`) driven in headless Chromium against `npm start` (wrangler dev).
// Needs Debian's chromium at /usr/bin/chromium (`.ci/run` installs it); without it the test is skipped, loudly.
// Screenshots go to test-artifacts/playground/ (gitignored).
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { after, before, test } from "node:test";
import assert from "node:assert/strict";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const ARTIFACTS = "test-artifacts/playground";
const WAIT = 45_000;

if (!existsSync(CHROMIUM)) {
  console.error(`\n!!!! SKIPPED: the playground browser test needs Chromium at ${CHROMIUM} (apt-get install -y chromium) !!!!\n`);
  process.exit(0);
}
const { chromium } = await import("playwright-core");

/** @import { ChildProcess } from "node:child_process" */
/** @import { Browser, Page } from "playwright-core" */

/**
 * A port nobody listens on right now.
 * @returns {Promise<number>}
 */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = /** @type {import("node:net").AddressInfo} */ (server.address());
      server.close(() => resolve(port));
    });
  });
}

/**
 * Polls `check` until it returns a truthy value or `ms` pass.
 * @template T
 * @param {() => Promise<T>} check
 * @param {number} ms
 * @param {string} what
 */
async function until(check, ms, what) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** @type {ChildProcess | undefined} */
let server;
/** @type {Browser | undefined} */
let browser;
/** @type {Page} */
let page;
/** @type {string} */
let base;
/** @type {string} */
let toolSession;
/** @type {string[]} */
const failedResponses = [];

before(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  // Its own process group, so that ending it ends wrangler and workerd too.
  const child = spawn(process.execPath, ["scripts/start.mjs"], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  server = child;
  let serverLog = "";
  child.stdout.on("data", (chunk) => (serverLog += chunk));
  child.stderr.on("data", (chunk) => (serverLog += chunk));
  await until(async () => (await fetch(`${base}/`)).ok, 90_000, "npm start to answer").catch((error) => {
    console.error(serverLog);
    throw error;
  });
  const launched = await chromium.launch({
    executablePath: CHROMIUM,
    // Without the background-networking flags Chromium keeps trying to reach Google's hosts, which a closed network refuses.
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  browser = launched;
  page = await launched.newPage({ viewport: { width: 1200, height: 900 } });
  page.on("response", (response) => {
    if (response.status() >= 400) failedResponses.push(`${response.status()} ${response.url()}`);
  });
  page.setDefaultTimeout(WAIT);
});

after(async () => {
  await browser?.close();
  if (server?.pid) {
    try {
      process.kill(-server.pid, "SIGTERM");
    } catch {
      // already gone
    }
  }
});

const adminToken = () =>
  readFileSync(".dev.vars", "utf8")
    .match(/^\s*ADMIN_TOKEN\s*=\s*(.+)$/m)?.[1]
    ?.trim();
/** @param {string} name */
const shot = (name) => page.screenshot({ path: `${ARTIFACTS}/${name}.png`, fullPage: true });
const status = () => page.locator("#status");
const output = () => page.locator("#output");

/** In the page: whether the agent picker (a <select>) shows the playground's mock agent. */
const agentIsPlayground = () => {
  const agent = document.querySelector("#agent");
  return agent instanceof HTMLSelectElement && agent.value === "playground";
};

/** An offline agent whose `current_time` waits for a person's approval. */
const APPROVAL_AGENT = {
  id: "playground-approvals",
  name: "Playground (approvals)",
  provider: "mock",
  model: "mock-1",
  tools: [{ type: "builtin", name: "current_time", requires_approval: true }],
};

/**
 * Creates the agent through the API unless it is there (the local D1 state outlives a run of this test), then picks it in the page.
 * @param {{ id: string }} agent
 */
async function useAgent(agent) {
  const auth = { authorization: `Bearer ${adminToken()}`, "content-type": "application/json" };
  const known = await fetch(`${base}/v1/agents/${agent.id}`, { headers: auth });
  if (known.status === 404) {
    const created = await fetch(`${base}/v1/agents`, { method: "POST", headers: auth, body: JSON.stringify(agent) });
    assert.equal(created.status, 201, await created.text());
  } else assert.equal(known.status, 200);
  // The token field's change event reloads the agent list.
  await page.locator("#token").dispatchEvent("change");
  await page.locator(`#agent option[value='${agent.id}']`).waitFor({ state: "attached" });
  await page.selectOption("#agent", agent.id);
}

/**
 * Types a message into the console and sends it.
 * @param {string} text
 */
async function send(text) {
  await page.fill("#input", text);
  await page.click("#send");
}

/** Starts the next turns in a new session. */
async function newSession() {
  await page.selectOption("#session", "");
  await assert.doesNotReject(page.locator("#transcript .message").first().waitFor({ state: "detached" }));
}

test("the page loads with a token hint, and the mock agent is created once and reused", async () => {
  await page.goto(`${base}/`);
  await page.locator("#token-hint", { hasText: ".dev.vars" }).waitFor();
  const token = adminToken();
  assert.ok(token, ".dev.vars has an ADMIN_TOKEN");
  await page.fill("#token", token);
  await page.locator("#token").press("Tab");
  await page.click("#mock");
  await page.waitForFunction(agentIsPlayground);
  await page.click("#mock");
  await page.waitForFunction(agentIsPlayground);
  const playgroundAgents = await page.locator("#agent option[value='playground']").count();
  assert.equal(playgroundAgents, 1);
  assert.equal(await page.locator("#send").isDisabled(), false);
  await shot("01-ready");
});

test("a turn streams its answer, with the tool call, its checkpoint, tokens and the transcript", async () => {
  await newSession();
  await send("Hello there [[tool current_time {}]]");
  await status().filter({ hasText: "completed" }).waitFor();
  const text = (await output().textContent()) ?? "";
  assert.match(text, /^You said: Hello there\ncurrent_time returned: \{"utc":"\d{4}-/);
  await page.locator("#activity .tool", { hasText: "→ current_time" }).waitFor();
  await page.locator("#activity .tool", { hasText: "← current_time returned" }).waitFor();
  assert.ok((await page.locator("#activity .fork").count()) >= 1);
  assert.match(
    (await page.locator("#metrics").textContent()) ?? "",
    /tokens in [1-9]\d* · out [1-9]\d* · cost unknown \(no price for this model\) · tool calls 1 · retries 0/,
  );
  await page.locator("#transcript .message.user", { hasText: "Hello there" }).waitFor();
  toolSession = await page.inputValue("#session");
  assert.match(toolSession, /^ses_/);
  await shot("02-turn-with-tool");
});

test("forking from the tool call's checkpoint answers a new question from that step", async () => {
  const firstCheckpoint = page.locator("#activity .fork").first();
  await page.fill("#input", "");
  await firstCheckpoint.click();
  await status().filter({ hasText: "completed" }).waitFor();
  // From the checkpoint after current_time's result, with no new input, the same answer is built again.
  assert.match((await output().textContent()) ?? "", /^You said: Hello there\ncurrent_time returned: /);
  await page.locator("#activity", { hasText: "continued from ckpt_" }).waitFor();
  await page.locator("#transcript .message.assistant", { hasText: "current_time returned" }).waitFor();
  await shot("03-forked");
});

test("a paused run is continued with the client tool's result", async () => {
  await newSession();
  await send('[[tool ask_user {"question":"Name?"}]] Hi');
  await status().filter({ hasText: "paused" }).waitFor();
  await page.fill("#actions textarea", "Ada");
  await shot("04-paused");
  await page.click("#continue");
  await status().filter({ hasText: "completed" }).waitFor();
  assert.equal(await output().textContent(), "You said: Hi\nask_user returned: Ada");
});

test("a failed model call shows its retry, and the retried answer", async () => {
  await newSession();
  await send("[[fail 529 x1]] Try again");
  await status().filter({ hasText: "completed" }).waitFor();
  assert.equal(await output().textContent(), "You said: Try again");
  await page.locator("#activity .retry", { hasText: "attempt 1 of step 1 failed (overloaded" }).waitFor();
  assert.match((await page.locator("#metrics").textContent()) ?? "", /retries 1$/);
});

test("a slow turn is cancelled from the console", async () => {
  await newSession();
  await send("This one is far too slow [[slow 20000]]");
  await page.locator("#events", { hasText: "model_request_started" }).waitFor({ state: "attached" });
  await page.click("#cancel");
  await status().filter({ hasText: "cancelled" }).waitFor();
  await page.locator("#events", { hasText: "run_cancelled" }).waitFor({ state: "attached" });
  assert.equal(await page.locator("#send").isDisabled(), false);
  await shot("05-cancelled");
});

test("after a reload mid-run the console re-attaches and shows the whole answer", async () => {
  await newSession();
  const words = "one two three four five six seven eight nine ten eleven twelve";
  await send(`${words} [[slow 3000]]`);
  await output().filter({ hasText: "You said:" }).waitFor();
  assert.notEqual(await output().textContent(), `You said: ${words}`, "the answer should still be streaming at the reload");
  await page.reload();
  await status().filter({ hasText: "completed" }).waitFor();
  assert.equal(await output().textContent(), `You said: ${words}`);
  // The reloaded page replayed the run from its start (events?after=0), then followed it live.
  await page.locator("#events", { hasText: "run_started" }).waitFor({ state: "attached" });
  await shot("06-reattached");
});

test("picking an earlier session shows its transcript", async () => {
  await page.selectOption("#session", toolSession);
  await page.locator("#transcript .message.user", { hasText: "Hello there [[tool current_time {}]]" }).waitFor();
  await page.locator("#transcript .message.tool", { hasText: "utc" }).waitFor();
});

test("a message sent while a run streams is steered into it, and the run answers it", async () => {
  await newSession();
  await send("Take your time [[slow 5000]]");
  await page.locator("#events", { hasText: "model_request_started" }).waitFor({ state: "attached" });
  assert.equal(await page.inputValue("#on-busy"), "steer");
  await send("Also mention the weather");
  await page.locator("#activity .steer", { hasText: "joined the run: Also mention the weather" }).waitFor();
  await shot("07-steered");
  await status().filter({ hasText: "completed" }).waitFor();
  // The run's model read the steer before a last call, whose answer is the run's.
  assert.equal(await output().textContent(), "You said: Also mention the weather");
  await page.locator("#transcript .message.user", { hasText: "Also mention the weather" }).waitFor();
  assert.equal(await page.locator("#on-busy").isDisabled(), true);
});

test("a message sent with interrupt cancels the running run and is answered instead", async () => {
  await newSession();
  await send("This would take long [[slow 20000]]");
  await page.locator("#events", { hasText: "model_request_started" }).waitFor({ state: "attached" });
  await page.selectOption("#on-busy", "interrupt");
  await send("Answer this instead");
  await status().filter({ hasText: "completed" }).waitFor();
  assert.equal(await output().textContent(), "You said: Answer this instead");
  await page.locator("#transcript .message.user", { hasText: "This would take long" }).waitFor();
});

test("a run waiting for approval holds the session: a message queues behind it and runs once the call is approved", async () => {
  await useAgent(APPROVAL_AGENT);
  await newSession();
  await send("What time is it? [[tool current_time {}]]");
  await status().filter({ hasText: "paused: a tool call waits for approval" }).waitFor();
  await page.locator("#actions .approval-request", { hasText: "current_time {}" }).waitFor();
  assert.equal(await page.inputValue("#on-busy"), "enqueue");
  await send("And after that?");
  const queued = page.locator("#queue li", { hasText: /^run_\S+ queued/ });
  await queued.waitFor();
  assert.equal(await queued.count(), 1);
  await shot("08-approval-and-queue");
  await page.click("#actions .approve");
  // The approved call runs, its run completes, then the queued run starts and is followed.
  await page.locator("#transcript .message.assistant", { hasText: "current_time returned: {" }).waitFor();
  await page.locator("#transcript .message.assistant", { hasText: "You said: And after that?" }).waitFor();
  await queued.waitFor({ state: "detached" });
  await status().filter({ hasText: "completed" }).waitFor();
});

test("a denied call is answered with the reason, and the run completes", async () => {
  await newSession();
  await send("[[tool current_time {}]] Time please");
  await page.locator("#actions .approval-request", { hasText: "current_time {}" }).waitFor();
  await page.fill("#actions .reason", "not now");
  await page.click("#actions .deny");
  await status().filter({ hasText: "completed" }).waitFor();
  assert.match((await output().textContent()) ?? "", /^You said: Time please\ncurrent_time returned: .*denied: not now/);
  await page.locator("#activity .approval", { hasText: "denied: not now by admin (client)" }).waitFor();
  await shot("09-denied");
});

test("no request of the page failed (no /favicon.ico 404)", async () => {
  const icon = await fetch(`${base}/favicon.ico`);
  assert.equal(icon.status, 200);
  assert.match(icon.headers.get("content-type") ?? "", /icon/);
  // API calls are the console's business (the mock agent's first lookup is a 404 by design); the page's own files must all load.
  assert.deepEqual(
    failedResponses.filter((line) => !line.includes("/v1/")),
    [],
  );
});
