import { createApp } from "../../../src/api/app";
import { api } from "../../support/http";

/** A JSON Schema as the OpenAPI document gives it (only the keywords the fuzzer reads). */
export type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
};

/** One operation of the OpenAPI document: its parameters and JSON body schema. */
export type Operation = {
  method: string;
  path: string;
  parameters: { name: string; in: "path" | "query" | "header"; required?: boolean; schema: JsonSchema }[];
  body?: JsonSchema;
};

type Document = {
  paths: Record<
    string,
    Record<string, { parameters?: Operation["parameters"]; requestBody?: { content: Record<string, { schema: JsonSchema }> } }>
  >;
  components: { schemas: Record<string, JsonSchema> };
};

/** Every route the app serves (method and Hono path, e.g. `GET /v1/agents/:agent_id`), from its route table. */
export function appRoutes(): { method: string; path: string }[] {
  const seen = new Map<string, { method: string; path: string }>();
  for (const route of createApp().routes) {
    if (route.method === "ALL") continue;
    seen.set(`${route.method} ${route.path}`, { method: route.method, path: route.path });
  }
  return [...seen.values()];
}

/** `/v1/agents/{agent_id}` (OpenAPI) → `/v1/agents/:agent_id` (Hono). */
export const honoPath = (openapiPath: string) => openapiPath.replace(/\{([^}]+)\}/g, ":$1");

/** The OpenAPI document's operations, with `$ref`s resolved against its components. */
export async function operations(): Promise<{ operations: Operation[]; resolve: (schema: JsonSchema) => JsonSchema }> {
  const document = await (await api("/openapi.json", {}, null)).json<Document>();
  const resolve = (schema: JsonSchema): JsonSchema =>
    schema.$ref ? resolve(document.components.schemas[schema.$ref.replace("#/components/schemas/", "")] ?? {}) : schema;
  const result: Operation[] = [];
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const schema = operation.requestBody?.content["application/json"]?.schema;
      result.push({
        method: method.toUpperCase(),
        path,
        parameters: (operation.parameters ?? []).map((p) => ({ ...p, schema: resolve(p.schema) })),
        body: schema ? resolve(schema) : undefined,
      });
    }
  }
  return { operations: result, resolve };
}
