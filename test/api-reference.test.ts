/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";
import { renderApiReference } from "../scripts/api-reference.mjs";
import { api } from "./support/http";

// The repository's markdown, read at build time by Vite (the tests run in workerd, with no file system).
const markdown = import.meta.glob(["../*.md", "../docs/*.md"], { query: "?raw", import: "default", eager: true }) as Record<string, string>;

/** GitHub's heading anchors: lower case, punctuation dropped except `-` and `_` (kept, as in `store_events`), spaces to `-`. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[`*~[\]()]/g, "")
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
const anchorsOf = (text: string) => new Set([...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map((match) => slug(match[1] ?? "")));

/** `../docs/a.md` + `../README.md` → `../README.md`: a link's target, relative to the test folder like the glob's keys. */
function resolve(from: string, target: string): string {
  const parts = from.split("/").slice(0, -1);
  for (const part of target.split("/")) {
    if (part === "..") parts.pop();
    else if (part !== ".") parts.push(part);
  }
  return parts.join("/");
}

describe("docs/api.md", () => {
  it("is the rendering of the current OpenAPI document (npm run docs:api)", async () => {
    const document = await (await api("/openapi.json", {}, null)).json<{ paths: Record<string, Record<string, unknown>> }>();
    expect(markdown["../docs/api.md"]).toBe(renderApiReference(document));
  });
});

describe("the repository's markdown", () => {
  it("links only inside the repository, to files and headings that exist", () => {
    expect(Object.keys(markdown)).toContain("../README.md");
    const broken: string[] = [];
    for (const [file, text] of Object.entries(markdown)) {
      const withoutCode = text.replace(/```[\s\S]*?```/g, "");
      for (const match of withoutCode.matchAll(/\]\(([^)\s]+)\)/g)) {
        const link = match[1] ?? "";
        if (/^(https?:|mailto:)/.test(link)) continue;
        const [path = "", anchor] = link.split("#");
        const target = path === "" ? file : resolve(file, path);
        if (!target.startsWith("../") || target.startsWith("../../")) {
          broken.push(`${file}: ${link} leaves the repository`);
          continue;
        }
        const isTrackedFolder = ["../src", "../test", "../scripts", "../migrations", "../docs"].some(
          (folder) => target === folder || target.startsWith(`${folder}/`),
        );
        if (!target.endsWith(".md")) {
          if (!isTrackedFolder) broken.push(`${file}: ${link} is not a file of the repository`);
          continue;
        }
        const targetText = markdown[target];
        if (targetText === undefined) broken.push(`${file}: ${link} is missing`);
        else if (anchor !== undefined && !anchorsOf(targetText).has(anchor)) broken.push(`${file}: ${link} has no such heading`);
      }
    }
    expect(broken).toEqual([]);
  });
});
