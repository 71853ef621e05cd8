import { abortAllDurableObjects } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { deletesSession, holdD1Batch } from "./support/held-d1";
import { api, createAgent } from "./support/http";
import { runTurn } from "./support/runs";
import { callsReceived, openGate } from "./support/tool-server";

const sessionIdFor = (name: string) => `${name}-${crypto.randomUUID()}`;

// Alone in its file: it resets every object of the test's runtime.
describe("a delete cut off by a reset", () => {
  it("finishes a delete on the next entry after the object was reset in the middle of it: the session never comes back", async () => {
    const agent = await createAgent();
    const sessionId = sessionIdFor("delete-reset");
    const first = await runTurn(agent.id, { input: "first", session_id: sessionId });
    const bucket = `delete-reset-${crypto.randomUUID()}`;
    await holdD1Batch(sessionId, deletesSession, bucket);

    const deleting = api(`/v1/sessions/${sessionId}`, { method: "DELETE" });
    await callsReceived(bucket, 1);
    await abortAllDurableObjects();
    await openGate(bucket);
    // The client whose delete was cut off is told it failed; the delete is not lost.
    expect((await deleting).status).toBe(500);

    expect((await api(`/v1/sessions/${sessionId}`)).status).toBe(404);
    expect((await api(`/v1/agents/${agent.id}/runs/${first.id}`)).status).toBe(404);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM runs WHERE id = ?").bind(first.id).first<number>("n")).toBe(0);
  });
});
