import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ApiError } from "../src/api/errors";
import { fetchImage } from "../src/media/fetch-image";
import { createAgent } from "./support/http";
import { runTurn, transcriptOf } from "./support/runs";
import { callsReceived } from "./support/tool-server";

type RecordedCall = { body: unknown; signature_valid: boolean };

const bucket = () => crypto.randomUUID();
/** A tool server URL that answers `status` with a Location to `/echo/<target>`, which records every hit. */
const redirectUrl = (from: string, target: string, status = 302) =>
  `${env.TOOL_SERVER_URL}/redirect/${from}?status=${status}&to=${encodeURIComponent(`/echo/${target}`)}`;

describe("redirects of outbound calls", () => {
  it("makes a webhook's redirect a tool error and never sends the signed call to its target", async () => {
    for (const status of [301, 302, 303, 307, 308]) {
      const [from, target] = [bucket(), bucket()];
      const agent = await createAgent({
        tools: [
          { type: "webhook", name: "hook", description: "a hook", parameters: { type: "object" }, url: redirectUrl(from, target, status) },
        ],
      });
      const run = await runTurn(agent.id, { input: "[[tool hook {}]]" });
      const error = `The webhook answered a redirect (status ${status}); redirects are not followed`;
      expect(run.status, `${status}`).toBe("completed");
      expect(run.output, `${status}`).toBe(`hook returned: ${error}`);
      const transcript = await transcriptOf(run.session_id);
      expect(transcript[2]?.content[0], `${status}`).toMatchObject({ type: "tool_result", output: error, is_error: true });
      expect(
        (await callsReceived<RecordedCall>(from)).map((c) => c.signature_valid),
        `${status}`,
      ).toEqual([true]);
      expect(await callsReceived<RecordedCall>(target), `${status}`).toEqual([]);
    }
  });

  it("makes an http_get redirect a tool error and never fetches its target", async () => {
    const [from, target] = [bucket(), bucket()];
    const agent = await createAgent({
      tools: [{ type: "builtin", name: "http_get" }],
      metadata: { http_get_allow: [new URL(env.TOOL_SERVER_URL).hostname] },
    });
    const run = await runTurn(agent.id, { input: `[[tool http_get ${JSON.stringify({ url: redirectUrl(from, target) })}]]` });
    expect(run.output).toBe("http_get returned: The URL answered a redirect (status 302); redirects are not followed");
    const transcript = await transcriptOf(run.session_id);
    expect(transcript[2]?.content[0]).toMatchObject({ type: "tool_result", is_error: true });
    expect(await callsReceived<RecordedCall>(from)).toHaveLength(1);
    expect(await callsReceived<RecordedCall>(target)).toEqual([]);
  });

  // The tests' Worker runs with ENVIRONMENT=development, where the guard lets loopback URLs pass, so the
  // image fetch is called as production would call it. Its first URL is checked before (parse-input);
  // here only the redirect hops are.
  it("checks every redirect hop of an image URL with the guard before fetching it", async () => {
    const cases: [string, string][] = [
      [`${env.TOOL_SERVER_URL}/echo/TARGET`, "must use https"],
      [`https://127.0.0.1:1/echo/TARGET`, "must not name a loopback IP address"],
      [`https://[::ffff:a9fe:a9fe]/latest/meta-data`, "must not name a link-local IP address"],
      [`https://10.0.0.1/`, "must not name a private IP address"],
    ];
    for (const [to, reason] of cases) {
      const [from, target] = [bucket(), bucket()];
      const url = `${env.TOOL_SERVER_URL}/redirect/${from}?to=${encodeURIComponent(to.replace("TARGET", target))}`;
      const failure = await fetchImage(url, "input.1.url", "production", false).then(
        () => null,
        (error: unknown) => error,
      );
      expect(failure, to).toBeInstanceOf(ApiError);
      expect((failure as ApiError).message, to).toBe(`The image at input.1.url redirected to a URL that ${reason}`);
      expect(await callsReceived<RecordedCall>(from), to).toHaveLength(1);
      expect(await callsReceived<RecordedCall>(target), to).toEqual([]);
    }
  });
});
