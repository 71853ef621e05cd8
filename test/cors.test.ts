import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../src/api/app";
import { SocketClient, webSocketHandshake } from "./support/events";
import { api, apiRequest, createAgent, type ApiInit } from "./support/http";
import { runTurn } from "./support/runs";

const APP = "https://app.example.com";
const ADMIN = "https://admin.example.com";
const PREFLIGHT = { "access-control-request-method": "POST", "access-control-request-headers": "authorization,content-type" };

/** The Worker's app as deployed with `CORS_ORIGINS` set (the tests' bindings leave it unset). */
const app = createApp();
async function withCors(path: string, init: ApiInit = {}, token?: string | null): Promise<Response> {
  const ctx = createExecutionContext();
  const response = await app.fetch(apiRequest(path, init, token), { ...env, CORS_ORIGINS: ` ${APP}, ${ADMIN} ,` }, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

const corsHeaders = (response: Response) => [...response.headers.keys()].filter((name) => name.startsWith("access-control-"));
const varyOf = (response: Response) => (response.headers.get("vary") ?? "").split(",").map((v) => v.trim().toLowerCase());

describe("CORS when CORS_ORIGINS is unset (the default)", () => {
  it("sends no CORS headers, and a preflight is refused like any request without a token", async () => {
    const preflight = await api("/v1/agents", { method: "OPTIONS", headers: { origin: APP, ...PREFLIGHT } }, null);
    expect(preflight.status).toBe(401);
    expect((await preflight.json<{ error: { type: string } }>()).error.type).toBe("unauthorized");
    expect(corsHeaders(preflight)).toEqual([]);

    const list = await api("/v1/agents", { headers: { origin: APP } });
    expect(list.status).toBe(200);
    expect(corsHeaders(list)).toEqual([]);
    expect(varyOf(list)).not.toContain("origin");
  });
});

describe("CORS for the origins of CORS_ORIGINS", () => {
  it("answers a preflight from a listed origin with 204, without a token", async () => {
    for (const origin of [APP, ADMIN]) {
      const response = await withCors("/v1/agents", { method: "OPTIONS", headers: { origin, ...PREFLIGHT } }, null);
      expect(response.status, origin).toBe(204);
      expect(response.headers.get("access-control-allow-origin"), origin).toBe(origin);
      expect(response.headers.get("access-control-allow-methods")).toBe("GET,POST,PATCH,DELETE,OPTIONS");
      expect(response.headers.get("access-control-allow-headers")).toBe("Authorization,Content-Type,Idempotency-Key,Last-Event-ID");
      expect(response.headers.get("access-control-expose-headers")).toBe("Retry-After");
      expect(response.headers.get("access-control-max-age")).toBe("600");
      expect(response.headers.has("access-control-allow-credentials")).toBe(false);
      expect(varyOf(response)).toContain("origin");
      expect(await response.text()).toBe("");
    }
  });

  it("answers a preflight before the bearer token would be checked, on any /v1 path", async () => {
    const response = await withCors(
      "/v1/sessions/s/runs/r/events",
      { method: "OPTIONS", headers: { origin: APP, ...PREFLIGHT } },
      "wrong-token",
    );
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe(APP);
  });

  it("lets a listed origin read answers and their Retry-After, errors included", async () => {
    const ok = await withCors("/v1/agents", { headers: { origin: APP } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("access-control-allow-origin")).toBe(APP);
    expect(ok.headers.get("access-control-expose-headers")).toBe("Retry-After");
    expect(ok.headers.has("access-control-allow-credentials")).toBe(false);
    expect(varyOf(ok)).toContain("origin");

    const anonymous = await withCors("/v1/agents", { headers: { origin: APP } }, null);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("access-control-allow-origin")).toBe(APP);

    // A paused run holds its session: the next turn is 409 session_busy with Retry-After.
    const agent = await createAgent({ tools: [{ type: "client", name: "ask", description: "ask", parameters: { type: "object" } }] });
    const sessionId = `cors-${crypto.randomUUID()}`;
    const paused = await runTurn(agent.id, { input: "[[tool ask {}]] hold", session_id: sessionId });
    expect(paused.status).toBe("paused");
    const busy = await withCors(`/v1/agents/${agent.id}/runs`, {
      headers: { origin: APP },
      body: { input: "me too", session_id: sessionId },
    });
    expect(busy.status).toBe(409);
    expect(busy.headers.get("retry-after")).toBe("1");
    expect(busy.headers.get("access-control-allow-origin")).toBe(APP);
    expect(busy.headers.get("access-control-expose-headers")).toBe("Retry-After");
  });

  it("gives any other origin no CORS headers: its preflight is refused as without CORS", async () => {
    for (const origin of ["https://evil.example.com", "http://app.example.com", "https://app.example.com.evil.example", "null"]) {
      const preflight = await withCors("/v1/agents", { method: "OPTIONS", headers: { origin, ...PREFLIGHT } }, null);
      expect(preflight.status, origin).toBe(401);
      expect(corsHeaders(preflight), origin).toEqual([]);

      const list = await withCors("/v1/agents", { headers: { origin } });
      expect(list.status, origin).toBe(200);
      expect(corsHeaders(list), origin).toEqual([]);
      expect(varyOf(list), origin).toContain("origin");
    }
  });

  it("still upgrades a WebSocket from a listed origin", async () => {
    const agent = await createAgent();
    const sessionId = `cors-ws-${crypto.randomUUID()}`;
    await runTurn(agent.id, { input: "first", session_id: sessionId });
    const response = await withCors(`/v1/sessions/${sessionId}/ws`, { headers: { origin: APP, ...webSocketHandshake() } });
    expect(response.status).toBe(101);
    const socket = new SocketClient(response.webSocket!);
    socket.send('{"type":"ping"}');
    expect(await socket.nextMessage()).toBe('{"type":"pong"}');
    socket.ws.close();
  });
});
