import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { isStrictlyIncreasing, storedEvents } from "./support/events";
import { sessionStub } from "./support/held-d1";
import { api, createAgent, createTenantToken, uniqueTenant } from "./support/http";
import { postRun, type Run } from "./support/runs";
import { callsReceived } from "./support/tool-server";

type Action = { type?: string; tool_call_id: string; name: string; arguments: unknown };
type Paused = Run & { required_actions: Action[] };
type ErrorBody = { error: { type: string; message: string; details: { fields?: { path: string; message: string }[] } } };

/** An agent whose webhook `send_email` needs a person's approval; the tool server records its calls. */
async function approvalAgent(fields: Record<string, unknown> = {}, token?: string) {
  const bucket = crypto.randomUUID();
  const sendEmail = {
    type: "webhook",
    name: "send_email",
    parameters: { type: "object", properties: { to: { type: "string" } } },
    url: `${env.TOOL_SERVER_URL}/echo/${bucket}`,
    requires_approval: true,
  };
  const agent = await createAgent(
    { tools: [sendEmail, { type: "client", name: "ask_user", parameters: { type: "object", properties: {} } }], ...fields },
    token,
  );
  return { bucket, agent };
}

const pausedOn = async (agentId: string, input: string, token?: string) => (await postRun(agentId, { input }, token)).json<Paused>();
const continueRun = (agentId: string, runId: string, body: Record<string, unknown>, token?: string) =>
  api(`/v1/agents/${agentId}/runs/${runId}/continue`, { body }, token);
const EMAIL = '[[tool send_email {"to":"ada@example.com"}]] mail Ada';

describe("tool approvals", () => {
  it("pauses for approval instead of calling the tool, and runs the approved call once", async () => {
    const tenant = uniqueTenant("approvals");
    const token = await createTenantToken(tenant);
    const { bucket, agent } = await approvalAgent({}, token);
    const paused = await pausedOn(agent.id, EMAIL, token);
    expect(paused.status).toBe("paused");
    expect(paused.required_actions).toEqual([
      { type: "approval", tool_call_id: expect.any(String), name: "send_email", arguments: { to: "ada@example.com" } },
    ]);
    expect(await callsReceived(bucket)).toEqual([]);
    const id = paused.required_actions[0]!.tool_call_id;
    const events = await storedEvents(agent.id, paused.id, undefined, token);
    expect(events.map((e) => e.type).slice(-2)).toEqual(["approval_requested", "run_paused"]);

    const approved = await continueRun(agent.id, paused.id, { approvals: [{ tool_call_id: id, approve: true }] }, token);
    expect(approved.status).toBe(200);
    const run = await approved.json<Run>();
    expect(run).toMatchObject({
      status: "completed",
      output: expect.stringContaining('send_email returned: {"echo":{"to":"ada@example.com"}}'),
    });
    expect(await callsReceived(bucket)).toHaveLength(1);
    const keyId = (await (await api("/v1/keys")).json<{ data: { id: string; tenant: string }[] }>()).data.find(
      (k) => k.tenant === tenant,
    )?.id;
    expect((await storedEvents(agent.id, paused.id, undefined, token)).find((e) => e.type === "approval_decided")?.data).toEqual({
      tool_call_id: id,
      approve: true,
      reason: null,
      key_id: keyId,
      source: "client",
    });

    // Sent twice: the run as it is, and the tool is not called again.
    const again = await continueRun(agent.id, paused.id, { approvals: [{ tool_call_id: id, approve: true }] }, token);
    expect(again.status).toBe(200);
    expect((await again.json<Run>()).status).toBe("completed");
    expect(await callsReceived(bucket)).toHaveLength(1);
  });

  it("makes a denied call a tool error the model reads, and never calls the tool", async () => {
    const { bucket, agent } = await approvalAgent();
    const paused = await pausedOn(agent.id, EMAIL);
    const id = paused.required_actions[0]!.tool_call_id;
    const denied = await (
      await continueRun(agent.id, paused.id, { approvals: [{ tool_call_id: id, approve: false, reason: "not today" }] })
    ).json<Run>();
    expect(denied).toMatchObject({ status: "completed", output: expect.stringContaining("send_email returned: denied: not today") });
    expect(await callsReceived(bucket)).toEqual([]);
    const types = (await storedEvents(agent.id, paused.id)).map((e) => e.type);
    expect(types).toContain("approval_decided");
    expect(types).toContain("tool_call_error");
  });

  it("asks for every pending action at once: a client tool's result and an approval", async () => {
    const { bucket, agent } = await approvalAgent();
    const paused = await pausedOn(agent.id, `[[parallel]] [[tool ask_user {}]] ${EMAIL}`);
    expect(paused.required_actions.map((a) => [a.type, a.name])).toEqual([
      ["tool_result", "ask_user"],
      ["approval", "send_email"],
    ]);
    const [ask, email] = paused.required_actions;
    const partial = await continueRun(agent.id, paused.id, { approvals: [{ tool_call_id: email!.tool_call_id, approve: true }] });
    expect(partial.status).toBe(400);
    expect((await partial.json<ErrorBody>()).error.details.fields).toEqual([
      { path: "tool_results", message: `missing results for: ${ask!.tool_call_id}` },
    ]);
    const wrong = await continueRun(agent.id, paused.id, {
      tool_results: [{ tool_call_id: email!.tool_call_id, output: "sent" }],
      approvals: [{ tool_call_id: ask!.tool_call_id, approve: true }],
    });
    expect(wrong.status).toBe(400);
    expect(await callsReceived(bucket)).toEqual([]);
    const done = await continueRun(agent.id, paused.id, {
      tool_results: [{ tool_call_id: ask!.tool_call_id, output: "yes" }],
      approvals: [{ tool_call_id: email!.tool_call_id, approve: true }],
    });
    expect(await done.json<Run>()).toMatchObject({ status: "completed" });
    expect(await callsReceived(bucket)).toHaveLength(1);
  });

  it("denies unanswered requests when the agent's approval timeout rings", async () => {
    const { bucket, agent } = await approvalAgent({ approval_timeout_seconds: 3600 });
    const paused = await pausedOn(agent.id, EMAIL);
    const stub = sessionStub(paused.session_id);
    // The timeout is an hour ahead: make it due, then ring the alarm as the platform would.
    const due = await runInDurableObject(stub, (_i, state) => {
      const row = state.storage.sql.exec<{ due_at: number }>("SELECT due_at FROM timers WHERE name = 'approval'").toArray()[0];
      state.storage.sql.exec("UPDATE timers SET due_at = 0 WHERE name = 'approval'");
      return row?.due_at;
    });
    expect(due).toBeGreaterThan(Date.now() + 3_500_000);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const run = await (await api(`/v1/agents/${agent.id}/runs/${paused.id}?wait=20`)).json<Run>();
    expect(run).toMatchObject({ status: "completed", output: expect.stringContaining("send_email returned: denied: approval timed out") });
    expect((await storedEvents(agent.id, paused.id)).find((e) => e.type === "approval_decided")?.data).toMatchObject({
      approve: false,
      reason: "approval timed out",
      key_id: null,
      source: "timeout",
    });
    expect(await callsReceived(bucket)).toEqual([]);
  });

  it("keeps waiting for approval across an eviction, and the approval still runs the call once", async () => {
    const { bucket, agent } = await approvalAgent();
    const paused = await pausedOn(agent.id, EMAIL);
    await evictDurableObject(sessionStub(paused.session_id));
    const after = await (await api(`/v1/agents/${agent.id}/runs/${paused.id}`)).json<Paused>();
    expect(after).toMatchObject({ status: "paused", required_actions: paused.required_actions });
    const id = paused.required_actions[0]!.tool_call_id;
    expect(await (await continueRun(agent.id, paused.id, { approvals: [{ tool_call_id: id, approve: true }] })).json<Run>()).toMatchObject({
      status: "completed",
    });
    expect(await callsReceived(bucket)).toHaveLength(1);
    const seqs = (await storedEvents(agent.id, paused.id)).map((e) => e.seq);
    expect(isStrictlyIncreasing(seqs)).toBe(true);
  });

  it("answers an approval sent after a cancel with the run as it is, never calling the tool", async () => {
    const { bucket, agent } = await approvalAgent();
    const paused = await pausedOn(agent.id, EMAIL);
    await api(`/v1/agents/${agent.id}/runs/${paused.id}/cancel`, { method: "POST" });
    const id = paused.required_actions[0]!.tool_call_id;
    const late = await continueRun(agent.id, paused.id, { approvals: [{ tool_call_id: id, approve: true }] });
    expect(late.status).toBe(200);
    expect(await late.json<Run>()).toMatchObject({ id: paused.id, status: "cancelled" });
    expect((await (await api(`/v1/agents/${agent.id}/runs`)).json<{ data: unknown[] }>()).data).toHaveLength(1);
    expect(await callsReceived(bucket)).toEqual([]);
  });
});
