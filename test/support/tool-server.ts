import { env } from "cloudflare:workers";

/**
 * A webhook tool whose calls the test tool server holds until `openGate(bucket)`: a run stays in
 * its tool step, running and holding its session, for exactly as long as the test wants.
 */
export const gateTool = (bucket: string, name = "wait") => ({
  type: "webhook",
  name,
  parameters: { type: "object", properties: {} },
  url: `${env.TOOL_SERVER_URL}/gate/${bucket}`,
});

/** Lets the held and any later calls of the bucket's gate tool answer. */
export async function openGate(bucket: string): Promise<void> {
  const response = await fetch(`${env.TOOL_SERVER_URL}/open/${bucket}`, { method: "POST" });
  if (!response.ok) throw new Error(`open gate: ${response.status}`);
}

/** The calls the test tool server recorded for `bucket`, once there are at least `count` of them. */
export async function callsReceived<T = { body: unknown; idempotency_key: string | null }>(bucket: string, count = 0): Promise<T[]> {
  const response = await fetch(`${env.TOOL_SERVER_URL}/calls/${bucket}?count=${count}`);
  if (!response.ok) throw new Error(`calls: ${response.status}`);
  return response.json<T[]>();
}
