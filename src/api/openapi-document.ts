import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Env } from "hono";

type Schema = { properties?: Record<string, { default?: unknown; description?: string }>; required?: string[] };
type Document = { components?: { schemas?: Record<string, Schema> }; paths?: Record<string, Record<string, { requestBody?: unknown }>> };

/**
 * The request bodies' defaults as words in the description, not `default`: client generators
 * (openapi-typescript) make a field with a `default` required, although a client may leave it out.
 */
export function documentRequestDefaults(document: Document): Document {
  const bodies = new Set<string>();
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      for (const [, name] of JSON.stringify(operation.requestBody ?? {}).matchAll(/#\/components\/schemas\/([A-Za-z0-9_]+)/g))
        if (name) bodies.add(name);
    }
  }
  for (const name of bodies) {
    for (const property of Object.values(document.components?.schemas?.[name]?.properties ?? {})) {
      if (property.default === undefined) continue;
      const said = `Optional; default ${JSON.stringify(property.default)}.`;
      property.description = property.description ? `${property.description}. ${said}` : said;
      delete property.default;
    }
  }
  return document;
}

/** Serves the app's OpenAPI 3.1 document at `/openapi.json`. */
export function serveOpenApiDocument<E extends Env>(app: OpenAPIHono<E>, config: Parameters<OpenAPIHono["getOpenAPI31Document"]>[0]): void {
  app.get("/openapi.json", (c) => c.json(documentRequestDefaults(app.getOpenAPI31Document(config) as Document)));
}
