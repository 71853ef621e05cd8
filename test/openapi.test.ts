import { describe, expect, it } from "vitest";
import { createApp } from "../src/api/app";
import { api } from "./support/http";

type Operation = { requestBody?: { content: Record<string, { schema: { $ref?: string } }> }; security?: unknown[] };
type Document = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, { properties?: Record<string, unknown>; required?: string[] }>; securitySchemes: Record<string, unknown> };
};

async function openapiDocument(): Promise<Document> {
  const response = await api("/openapi.json", {}, null);
  expect(response.status).toBe(200);
  return response.json<Document>();
}

const schemaOf = (document: Document, operation: Operation | undefined) => {
  const ref = operation?.requestBody?.content["application/json"]?.schema.$ref ?? "";
  return document.components.schemas[ref.replace("#/components/schemas/", "")];
};

describe("GET /openapi.json", () => {
  it("is served without a token and lists the keys, agents and health routes", async () => {
    const document = await openapiDocument();
    expect(document.openapi).toBe("3.1.0");
    expect(Object.keys(document.paths["/v1/keys"] ?? {}).sort()).toEqual(["get", "post"]);
    expect(Object.keys(document.paths["/v1/keys/{id}"] ?? {})).toEqual(["delete"]);
    expect(Object.keys(document.paths["/v1/agents"] ?? {}).sort()).toEqual(["get", "post"]);
    expect(Object.keys(document.paths["/v1/agents/{agent_id}"] ?? {}).sort()).toEqual(["delete", "get", "patch"]);
    expect(document.paths["/v1/health"]?.get).toBeDefined();
    expect(document.components.securitySchemes.bearerAuth).toEqual({ type: "http", scheme: "bearer" });
    expect(document.paths["/v1/agents"]?.post?.security).toEqual([{ bearerAuth: [] }]);
  });

  it("has the request schemas of keys and agents", async () => {
    const document = await openapiDocument();
    const keyCreate = schemaOf(document, document.paths["/v1/keys"]?.post);
    expect(Object.keys(keyCreate?.properties ?? {}).sort()).toEqual(["name", "tenant"]);
    const agentCreate = schemaOf(document, document.paths["/v1/agents"]?.post);
    expect(Object.keys(agentCreate?.properties ?? {})).toEqual(
      expect.arrayContaining(["id", "name", "provider", "model", "base_url", "instructions", "tools", "output_schema", "retries", "max_steps", "compaction", "metadata"]),
    );
    expect(agentCreate?.required?.sort()).toEqual(["model", "provider"]);
    const agentPatch = schemaOf(document, document.paths["/v1/agents/{agent_id}"]?.patch);
    expect(agentPatch?.properties).toHaveProperty("instructions");
    expect(agentPatch?.required ?? []).toEqual([]);
    expect(document.components.schemas.Agent?.properties).toHaveProperty("version");
    const runCreate = schemaOf(document, document.paths["/v1/agents/{agent_id}/runs"]?.post);
    expect(Object.keys(runCreate?.properties ?? {}).sort()).toEqual(["background", "input", "metadata", "output_schema", "session_id", "stream"]);
    const runContinue = schemaOf(document, document.paths["/v1/agents/{agent_id}/runs/{run_id}/continue"]?.post);
    expect(runContinue?.properties).toHaveProperty("tool_results");
    expect(document.components.schemas.Run?.properties).toHaveProperty("metrics");
  });

  it("documents every /v1 route of the app", async () => {
    const document = await openapiDocument();
    const routes = createApp()
      .routes.filter((route) => route.path.startsWith("/v1/") && route.method !== "ALL")
      .map((route) => `${route.method.toLowerCase()} ${route.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")}`);
    const documented = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method} ${path}`),
    );
    expect(routes.length).toBeGreaterThan(5);
    for (const route of new Set(routes)) expect(documented, route).toContain(route);
  });
});

describe("pages outside /v1", () => {
  it("serves the interactive reference at /docs without a token", async () => {
    const response = await api("/docs", {}, null);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/text\/html/);
    expect(await response.text()).toContain("/openapi.json");
  });

  // The files it links are static assets (wrangler.toml [assets]), answered before the Worker runs, so they are
  // not reachable here; `npm run test:browser` loads them in Chromium from `npm start`.
  it("serves the playground at / linking only files of its own origin", async () => {
    const response = await api("/", {}, null);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/text\/html/);
    const html = await response.text();
    expect(html).not.toMatch(/https?:\/\//);
    const links = [...html.matchAll(/(?:src|href)="([^"]*)"/g)].map((match) => match[1]);
    expect(links).toEqual(["/favicon.ico", "/playground/console.css", "/playground/console.js", "/docs"]);
  });
});
