import { afterEach, describe, expect, it, vi } from "vitest";
import { workerFetch } from "./support/client";
import { ADMIN_TOKEN } from "./support/http";

describe("README's TypeScript client example", () => {
  const realFetch = globalThis.fetch;
  afterEach(() => {
    globalThis.fetch = realFetch;
    vi.restoreAllMocks();
  });

  it("runs as written against the Worker and prints what its comments say", async () => {
    // The example reads its origin and token from the environment and uses the global fetch:
    // point both at the Worker under test.
    process.env.AGENTRY = "http://agentry.test";
    process.env.TOKEN = ADMIN_TOKEN;
    globalThis.fetch = ((input: RequestInfo | URL, init?: RequestInit) => workerFetch(new Request(input, init))) as typeof fetch;
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void lines.push(args.join(" ")));

    await import("virtual:readme-client-example");

    // The Worker's own JSON log lines go to the same console in workerd: keep the example's lines.
    expect(lines.filter((line) => !line.startsWith("{"))).toEqual([
      "completed You said: Hello",
      "streamed: lorem ipsum dolor sit amet",
      "paused -> completed",
      "404 not_found",
    ]);
  });
});
