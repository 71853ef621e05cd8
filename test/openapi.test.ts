import { describe, expect, it } from "vitest";
import { createApp } from "../src/api/app";
import { api } from "./support/http";

type Operation = { requestBody?: { content: Record<string, { schema: { $ref?: string } }> }; security?: unknown[] };
type Document = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, { properties?: Record<string, unknown>; required?: string[] }>;
    securitySchemes: Record<string, unknown>;
  };
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
      expect.arrayContaining([
        "id",
        "name",
        "provider",
        "model",
        "base_url",
        "instructions",
        "tools",
        "output_schema",
        "retries",
        "max_steps",
        "compaction",
        "metadata",
      ]),
    );
    expect(agentCreate?.required?.sort()).toEqual(["model", "provider"]);
    const agentPatch = schemaOf(document, document.paths["/v1/agents/{agent_id}"]?.patch);
    expect(agentPatch?.properties).toHaveProperty("instructions");
    expect(agentPatch?.required ?? []).toEqual([]);
    expect(document.components.schemas.Agent?.properties).toHaveProperty("version");
    const runCreate = schemaOf(document, document.paths["/v1/agents/{agent_id}/runs"]?.post);
    expect(Object.keys(runCreate?.properties ?? {}).sort()).toEqual([
      "background",
      "input",
      "instructions",
      "max_output_tokens",
      "max_tool_calls",
      "metadata",
      "on_busy",
      "output_schema",
      "parallel_tool_calls",
      "prompt_cache_key",
      "reasoning",
      "session_id",
      "stop",
      "stream",
      "temperature",
      "thinking",
      "tool_choice",
      "top_p",
      "user",
    ]);
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

type FullOperation = {
  operationId?: string;
  summary?: string;
  parameters?: { name: string; in: string }[];
  responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, { schema: Record<string, unknown> }> }>;
};
type FullDocument = {
  servers?: { url: string }[];
  paths: Record<string, Record<string, FullOperation>>;
  components: { schemas: Record<string, { properties?: Record<string, { properties?: Record<string, { enum?: string[] }> }> }> };
};

describe("GET /openapi.json for client generators", () => {
  const operations = async () => {
    const document = await (await api("/openapi.json", {}, null)).json<FullDocument>();
    return {
      document,
      list: Object.entries(document.paths).flatMap(([path, ops]) =>
        Object.entries(ops).map(([method, operation]) => ({ path, method, operation })),
      ),
    };
  };

  it("names the server and gives every operation a unique operationId and a summary", async () => {
    const { document, list } = await operations();
    expect(document.servers).toEqual([{ url: "/", description: "This Worker" }]);
    for (const { path, method, operation } of list) {
      expect(operation.operationId, `${method} ${path}`).toMatch(/^[a-z][A-Za-z]+$/);
      expect(operation.summary, `${method} ${path}`).toBeTruthy();
    }
    expect(new Set(list.map(({ operation }) => operation.operationId)).size).toBe(list.length);
  });

  it("documents 500 and 429 with Retry-After everywhere, 413 on bodies, and no 409 on reads", async () => {
    const { list } = await operations();
    for (const { path, method, operation } of list.filter(({ path }) => path.startsWith("/v1/"))) {
      expect(Object.keys(operation.responses), `${method} ${path}`).toEqual(expect.arrayContaining(["401", "429", "500"]));
      expect(operation.responses["429"]?.headers, `${method} ${path}`).toHaveProperty("Retry-After");
      if (method === "get") expect(Object.keys(operation.responses), `${method} ${path}`).not.toContain("409");
      if (method === "post" && !path.endsWith("/cancel") && !path.endsWith("/compact")) {
        expect(Object.keys(operation.responses), `${method} ${path}`).toContain("413");
      }
    }
  });

  it("declares the Idempotency-Key and Last-Event-ID headers, the error types and a replayed background run's status", async () => {
    const { document } = await operations();
    const createRun = document.paths["/v1/agents/{agent_id}/runs"]?.post;
    expect(createRun?.parameters).toContainEqual(expect.objectContaining({ name: "idempotency-key", in: "header" }));
    expect(document.paths["/v1/agents"]?.post?.parameters).toContainEqual(
      expect.objectContaining({ name: "idempotency-key", in: "header" }),
    );
    const events = document.paths["/v1/agents/{agent_id}/runs/{run_id}/events"]?.get;
    expect(events?.parameters).toContainEqual(expect.objectContaining({ name: "last-event-id", in: "header" }));
    expect(document.components.schemas.Error?.properties?.error?.properties?.type?.enum).toEqual(
      expect.arrayContaining(["invalid_request", "session_busy", "payload_too_large", "internal"]),
    );
    // 202: a background run's status, or a steer's answer.
    const accepted = createRun?.responses["202"]?.content?.["application/json"]?.schema as {
      anyOf: { properties: Record<string, { enum?: string[] }> }[];
    };
    expect(accepted.anyOf[0]?.properties.status?.enum).toEqual([
      "queued",
      "pending",
      "running",
      "paused",
      "completed",
      "cancelled",
      "error",
    ]);
    expect(Object.keys(accepted.anyOf[1]?.properties ?? {})).toEqual(["run_id", "steer_id", "steered_into"]);
  });
});

describe("GET /openapi.json counts", () => {
  it("types token counts and call counts as integers", async () => {
    const document = await (await api("/openapi.json", {}, null)).json<{
      components: { schemas: Record<string, { properties: Record<string, { type?: string }> }> };
    }>();
    const metrics = document.components.schemas.Metrics?.properties ?? {};
    for (const field of [
      "input_tokens",
      "output_tokens",
      "cache_read_tokens",
      "cache_write_tokens",
      "reasoning_tokens",
      "total_tokens",
      "model_calls",
      "tool_calls",
      "retries",
    ]) {
      expect(metrics[field]?.type, field).toBe("integer");
    }
  });
});

describe("GET /openapi.json examples", () => {
  it("has examples that validate against the schema they illustrate", async () => {
    const { Validator } = await import("@cfworker/json-schema");
    const document = await (await api("/openapi.json", {}, null)).json<Record<string, unknown>>();
    const found: { at: string; schema: Record<string, unknown>; example: unknown }[] = [];
    const walk = (node: unknown, at: string) => {
      if (Array.isArray(node)) {
        for (const [index, item] of node.entries()) walk(item, `${at}/${index}`);
      } else if (node && typeof node === "object") {
        const { example, ...schema } = node as Record<string, unknown>;
        if ("example" in node) found.push({ at, schema, example });
        for (const [key, value] of Object.entries(node)) walk(value, `${at}/${key}`);
      }
    };
    walk(document, "#");
    expect(found.length).toBeGreaterThan(5);
    // Whole bodies, not only single fields: the run bodies and the event union carry one each.
    expect(found.map(({ at }) => at)).toEqual(
      expect.arrayContaining(["#/components/schemas/CreateRun", "#/components/schemas/ContinueRun", "#/components/schemas/Event"]),
    );
    for (const { at, schema, example } of found) {
      // The document's components go along, so an example's $refs resolve.
      const result = new Validator({ ...schema, components: document.components } as never, "2020-12", false).validate(example);
      expect(result.errors, at).toEqual([]);
    }
  });
});
