import { describe, expect, it } from "vitest";
import { api } from "./support/http";

const docsPage = async () => {
  const response = await api("/docs", {}, null);
  expect(response.status).toBe(200);
  return response.text();
};

describe("GET /docs offline", () => {
  it("references only URLs of the Worker itself: no CDN, no font host", async () => {
    const html = await docsPage();
    const references = [...html.matchAll(/(?:src|href)\s*=\s*["']([^"']+)["']|url\(\s*["']?([^"')]+)|\bfrom\s+["']([^"']+)["']/g)].map(
      (match) => match[1] ?? match[2] ?? match[3],
    );
    expect(references).toContain("/docs/scalar.js");
    for (const reference of references) expect(reference, reference).toMatch(/^\/(?!\/)/);
    expect(html).not.toMatch(/\/\/[a-z0-9.-]+\.[a-z]{2,}/i);
  });

  it("turns off the viewer's default fonts, telemetry and hosted AI agent", async () => {
    const html = await docsPage();
    expect(html).toMatch(/"withDefaultFonts":\s*false/);
    expect(html).toMatch(/"telemetry":\s*false/);
    expect(html).toMatch(/"agent":\s*\{\s*"disabled":\s*true/);
  });

  it("serves the pinned viewer script from the Worker", async () => {
    const response = await api("/docs/scalar.js", {}, null);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/javascript/);
    expect(await response.text()).toContain("createApiReference");
  });
});
