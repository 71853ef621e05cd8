import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { createAgent, createTenantToken } from "../support/http";
import { runTurn } from "../support/runs";
import { count } from "./support/counts";

/**
 * The soak (issue 14), only in the long mode: `RELIABILITY_SOAK_MINUTES=10 npm run test:reliability`
 * (vitest.reliability.config.ts provides the minutes; 0, the default, skips it). Until the time is up it
 * keeps batches of concurrent sessions in two-turn tool loops; every turn must complete with its answer.
 */
declare module "vitest" {
  interface ProvidedContext {
    soakMinutes: number;
  }
}

const MINUTES = inject("soakMinutes");
const SESSIONS_PER_BATCH = 20;

const echoTool = (name: string) => ({
  type: "webhook",
  name,
  parameters: { type: "object", properties: {} },
  url: `${env.TOOL_SERVER_URL}/echo/soak`,
});

describe("soak", () => {
  it.runIf(MINUTES > 0)(
    `keeps concurrent tool loops correct for ${MINUTES} minutes`,
    { timeout: (MINUTES + 5) * 60_000 },
    async (context) => {
      const token = await createTenantToken();
      const agent = await createAgent({ tools: [echoTool("first"), echoTool("second")] }, token);
      const deadline = Date.now() + MINUTES * 60_000;
      while (Date.now() < deadline) {
        const outputs = await Promise.all(
          Array.from({ length: SESSIONS_PER_BATCH }, async (_, i) => {
            const sessionId = `soak-${crypto.randomUUID()}`;
            const first = await runTurn(agent.id, { input: `[[tool first {}]] [[tool second {}]] one ${i}`, session_id: sessionId }, token);
            const second = await runTurn(agent.id, { input: `two ${i}`, session_id: sessionId }, token);
            return [first.status, second.status, second.output];
          }),
        );
        expect(outputs).toEqual(outputs.map((_, i) => ["completed", "completed", `You said: two ${i}`]));
        count(context, "soak", "turns", SESSIONS_PER_BATCH * 2);
      }
      count(context, "soak", "minutes", MINUTES);
    },
  );
});
