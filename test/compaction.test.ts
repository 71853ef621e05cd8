import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, createAgent } from "./support/http";
import { PROVIDERS, upstreamBase } from "./support/upstreams";
import { SseReader } from "./support/events";
import { HOLD_MODEL, postRun, readEvents, runTurn } from "./support/runs";

type Message = { index: number; role: string; run_id: string; content: { type: string; text?: string; replaces?: [number, number] }[] };
const transcript = async (sessionId: string, query = "") =>
  (await (await api(`/v1/sessions/${sessionId}/transcript${query}`)).json<{ data: Message[] }>()).data;
const compaction = { enabled: true, trigger_tokens: 1000, keep_last_messages: 2 };

describe("compaction", () => {
  it("summarises older messages once a request would pass trigger_tokens, and keeps the full history readable", async () => {
    const agent = await createAgent({ compaction });
    const sessionId = `compact-${crypto.randomUUID()}`;
    await runTurn(agent.id, { input: "[[words 400]] one", session_id: sessionId });
    await runTurn(agent.id, { input: "[[words 400]] two", session_id: sessionId });
    const events = await readEvents(await postRun(agent.id, { input: "three", session_id: sessionId, stream: true }));
    const report = events.find((e) => e.type === "compaction");
    // All but the last two messages (the second answer and the new input) are summarised.
    expect(report?.data).toMatchObject({ compacted_messages: 3 });
    const { tokens_before, tokens_after } = report!.data as { tokens_before: number; tokens_after: number };
    expect(tokens_after).toBeLessThan(tokens_before);
    expect(events.at(-1)).toMatchObject({ type: "run_completed", data: { output: "You said: three" } });

    const compacted = await transcript(sessionId);
    expect(compacted[0]?.content[0]).toMatchObject({
      type: "summary",
      text: "You said: Summarise the conversation above.",
      replaces: [0, 2],
    });
    expect(compacted.slice(1).map((m) => m.index)).toEqual([3, 4, 5]);
    const full = await transcript(sessionId, "?full=true");
    expect(full.map((m) => m.index)).toEqual([0, 1, 2, 3, 4, 5]);
    // The summary is in D1 with the range it replaces, so a rebuilt object has it too.
    const stored = await env.DB.prepare("SELECT from_idx, to_idx FROM compactions WHERE session_id = ?").bind(sessionId).all();
    expect(stored.results).toEqual([{ from_idx: 0, to_idx: 2 }]);

    // The next turn sends the summary, not the long first answer.
    const after = await runTurn(agent.id, { input: "four", session_id: sessionId });
    const fresh = await runTurn(agent.id, { input: "four" });
    expect(after.metrics.input_tokens).toBeGreaterThan(fresh.metrics.input_tokens);
  });

  it("compacts on demand with POST /v1/sessions/{id}/compact", async () => {
    const agent = await createAgent({ compaction: { enabled: false, trigger_tokens: 100000, keep_last_messages: 2 } });
    const sessionId = `compact-now-${crypto.randomUUID()}`;
    for (const input of ["[[words 50]] a", "[[words 50]] b", "c"]) await runTurn(agent.id, { input, session_id: sessionId });
    const response = await api(`/v1/sessions/${sessionId}/compact`, { method: "POST" });
    expect(response.status).toBe(200);
    const report = await response.json<{ summary: string; compacted_messages: number; tokens_before: number; tokens_after: number }>();
    expect(report).toMatchObject({ summary: "You said: Summarise the conversation above.", compacted_messages: 4 });
    expect(report.tokens_after).toBeLessThan(report.tokens_before);
    const messages = await transcript(sessionId);
    expect(messages[0]?.content[0]).toMatchObject({ type: "summary", replaces: [0, 3] });
    expect(messages.map((m) => m.role)).toEqual(["user", "user", "assistant"]);
    const next = await runTurn(agent.id, { input: "d", session_id: sessionId });
    expect(next.output).toBe("You said: d");
  });

  it("answers 409 while a run is in progress, and 404 for an unknown session", async () => {
    const agent = await createAgent();
    const sessionId = `compact-busy-${crypto.randomUUID()}`;
    const held = new SseReader(await postRun(agent.id, { input: `${HOLD_MODEL} busy`, session_id: sessionId, stream: true }));
    const [started] = await held.until("model_request_started");
    expect((await api(`/v1/sessions/${sessionId}/compact`, { method: "POST" })).status).toBe(409);
    expect((await api(`/v1/agents/${agent.id}/runs/${started!.run_id}/cancel`, { method: "POST" })).status).toBe(200);
    expect((await held.rest()).at(-1)?.type).toBe("run_cancelled");
    expect((await api(`/v1/sessions/ses_unknown/compact`, { method: "POST" })).status).toBe(404);
  });

  it("answers a context-window error with one compaction and one more attempt", async () => {
    const agent = await createAgent({ compaction });
    const sessionId = `overflow-${crypto.randomUUID()}`;
    await runTurn(agent.id, { input: "one", session_id: sessionId });
    await runTurn(agent.id, { input: "two", session_id: sessionId });
    const events = await readEvents(
      await postRun(agent.id, { input: "[[context_overflow]] too long", session_id: sessionId, stream: true }),
    );
    expect(events.filter((e) => e.type === "compaction")).toHaveLength(1);
    expect(events.filter((e) => e.type === "model_request_started").map((e) => e.data.attempt)).toEqual([1, 2]);
    // The offline model overflows on every attempt: the second one is final.
    expect(events.at(-1)).toMatchObject({ type: "run_error", data: { error: { type: "context_window_exceeded", retryable: false } } });
  });

  it("keeps a context-window error permanent when compaction is off", async () => {
    const agent = await createAgent({ retries: 3, delay_between_retries: 0.01 });
    const run = await runTurn(agent.id, { input: "[[context_overflow]]" });
    expect(run).toMatchObject({ status: "error", attempts: 1, error: { type: "context_window_exceeded" } });
  });

  it.each(PROVIDERS)("%s compacts a history that holds tool calls and results (the summary request is plain text)", async (provider) => {
    const tools = [{ type: "builtin", name: "current_time" }];
    const agent = await createAgent({ provider, base_url: "mock:", tools, compaction });
    const sessionId = `compact-tools-${crypto.randomUUID()}`;
    await runTurn(agent.id, { input: "[[tool current_time]] [[words 400]] one", session_id: sessionId });
    await runTurn(agent.id, { input: "[[words 400]] two", session_id: sessionId });
    const events = await readEvents(await postRun(agent.id, { input: "three", session_id: sessionId, stream: true }));
    expect(events.find((e) => e.type === "compaction")?.data).toMatchObject({ compacted_messages: 5 });
    expect(events.at(-1)).toMatchObject({ type: "run_completed", data: { output: "You said: three" } });
    const compacted = await transcript(sessionId);
    expect(compacted[0]?.content[0]).toMatchObject({ type: "summary", text: "You said: Summarise the conversation above." });
  });

  it("ends the turn with the summary call's error, not an uncompacted request", async () => {
    const bucket = `compact-fail-${crypto.randomUUID()}`;
    const agent = await createAgent({ provider: "anthropic", base_url: upstreamBase(env.GATEWAY_URL, bucket, "anthropic"), compaction });
    const sessionId = `compact-fail-${crypto.randomUUID()}`;
    await runTurn(agent.id, { input: "[[words 400]] one", session_id: sessionId });
    await runTurn(agent.id, { input: "[[words 400]] two", session_id: sessionId });
    // From now on every provider request is answered 400.
    const failing = upstreamBase(env.GATEWAY_URL, bucket, "anthropic", "echo");
    expect((await api(`/v1/agents/${agent.id}`, { method: "PATCH", body: { base_url: failing } })).status).toBe(200);
    const events = await readEvents(await postRun(agent.id, { input: "three", session_id: sessionId, stream: true }));
    expect(events.map((e) => e.type)).not.toContain("model_request_started");
    expect(events.map((e) => e.type)).not.toContain("compaction");
    const last = events.at(-1);
    expect(last).toMatchObject({ type: "run_error", data: { error: { type: "provider_error", retryable: false } } });
    expect((last?.data.error as { message: string } | undefined)?.message).toMatch(/^Compaction failed: 400/);
  });
});
