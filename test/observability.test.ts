import { env } from "cloudflare:workers";
import { afterAll, describe, expect, it, vi } from "vitest";
import { countQuarantined } from "../src/db/quarantine";
import { addLogContext, log, withLogContext } from "../src/core/log";
import { api, createAgent, createTenantToken, uniqueTenant } from "./support/http";
import { runTurn } from "./support/runs";
import packageJson from "../package.json";

/** The JSON log lines written while the test runs (the Worker and its objects share this isolate). */
const lines: Record<string, unknown>[] = [];
const spies = (["log", "warn", "error"] as const).map((method) =>
  vi.spyOn(console, method).mockImplementation((line: unknown) => {
    if (typeof line === "string" && line.startsWith("{")) lines.push(JSON.parse(line) as Record<string, unknown>);
  }),
);
afterAll(() => {
  for (const spy of spies) spy.mockRestore();
});

const linesOf = (runId: string, event: string) => lines.filter((l) => l.run_id === runId && l.event === event);

describe("request ids", () => {
  it("answers every request with a fresh X-Request-Id, authenticated or not", async () => {
    const first = await api("/v1/agents");
    const second = await api("/v1/agents", {}, null);
    expect(second.status).toBe(401);
    const ids = [first.headers.get("x-request-id"), second.headers.get("x-request-id")];
    expect(ids[0]).toMatch(/^req_[a-z0-9]+$/);
    expect(ids[1]).toMatch(/^req_[a-z0-9]+$/);
    expect(ids[0]).not.toBe(ids[1]);
  });

  it("keeps a caller's plain X-Request-Id and replaces one that is not plain", async () => {
    const kept = await api("/v1/agents", { headers: { "x-request-id": "client-7f3a:retry.2" } });
    expect(kept.headers.get("x-request-id")).toBe("client-7f3a:retry.2");
    const replaced = await api("/v1/agents", { headers: { "x-request-id": "a b\u00e9" } });
    expect(replaced.headers.get("x-request-id")).toMatch(/^req_[a-z0-9]+$/);
  });
});

describe("log lines", () => {
  it("carry the context they were logged in, including what became known later and across awaits", async () => {
    await withLogContext({ request_id: "req_test1" }, async () => {
      addLogContext({ tenant: "acme" });
      await Promise.resolve();
      log({ event: "run_resumed", run_id: "run_1", reason: "test" });
    });
    log({ event: "sweep", stale_runs: 0, events_deleted: 0 });
    const [inside, outside] = lines.slice(-2);
    expect(inside).toMatchObject({ level: "warn", request_id: "req_test1", tenant: "acme", event: "run_resumed", run_id: "run_1" });
    expect(outside).toMatchObject({ level: "info", event: "sweep" });
    expect(outside).not.toHaveProperty("request_id");
  });

  it("log every run's start and end with its tenant, agent, session and run ids", async () => {
    const tenant = uniqueTenant("obs");
    const token = await createTenantToken(tenant);
    const agent = await createAgent({}, token);
    const run = await runTurn(agent.id, { input: "hello" }, token);
    expect(run.status).toBe("completed");
    const ids = { tenant, agent_id: agent.id, session_id: run.session_id, run_id: run.id };
    expect(linesOf(run.id, "run_started")).toEqual([expect.objectContaining({ level: "info", trigger: "request", ...ids })]);
    expect(linesOf(run.id, "run_finished")).toEqual([expect.objectContaining({ level: "info", status: "completed", ...ids })]);
  });

  it("log a failed run as a warning with its error type", async () => {
    const agent = await createAgent();
    const run = await runTurn(agent.id, { input: "[[fail 401 x1]] hi" });
    expect(run.status).toBe("error");
    expect(linesOf(run.id, "run_finished")).toEqual([
      expect.objectContaining({ level: "warn", status: "error", error_type: run.error?.type }),
    ]);
  });
});

describe("health routes", () => {
  it("GET /health answers without a token and touches nothing", async () => {
    const response = await api("/health", {}, null);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true, version: packageJson.version });
  });

  it("GET /v1/health reports every binding, the queue included, and the build's version", async () => {
    // Other test files of this worker may have quarantined rows: the count is of the shared D1.
    const quarantined = await countQuarantined(env.DB);
    const response = await api("/v1/health");
    expect(await response.json()).toEqual({
      ok: true,
      version: packageJson.version,
      bindings: { DB: "ok", SESSION: "ok", MEDIA: "ok", RUNS: "ok" },
      quarantined,
    });
  });
});
