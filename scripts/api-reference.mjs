// Renders docs/api.md's route tables from the OpenAPI document (the zod definitions of src/api), so the
// reference cannot drift from the code: `npm run docs:api` rewrites it, test/api-reference.test.ts checks it.

const HEADER = `# API reference

Agentry's HTTP API, generated from the same zod definitions that validate requests (\`npm run docs:api\`;
a test fails when this file is out of date). Every \`/v1\` route takes \`Authorization: Bearer <token>\`;
errors are \`{ "error": { "type", "message", "details" } }\`, and a 400 names each field at fault in
\`details.fields[{ path, message }]\`. The interactive version, with every schema, is served at \`/docs\`
(the document itself at \`/openapi.json\`). The guides in this folder explain the behaviour behind each route.
`;

/**
 * Markdown tables of every operation of an OpenAPI document, grouped by tag.
 * @param {{ paths: Record<string, Record<string, { operationId?: string; summary?: string; tags?: string[]; responses?: Record<string, unknown> }>> }} document
 * @returns {string}
 */
export function renderApiReference(document) {
  const groups = new Map();
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const tag = operation.tags?.[0] ?? "other";
      if (!groups.has(tag)) groups.set(tag, []);
      const statuses = Object.keys(operation.responses ?? {}).join(", ");
      const summary = (operation.summary ?? "").replaceAll("|", "\\|");
      groups.get(tag).push(`| \`${method.toUpperCase()} ${path}\` | \`${operation.operationId ?? ""}\` | ${summary} | ${statuses} |`);
    }
  }
  const sections = [...groups].map(
    ([tag, rows]) => `## ${tag}\n\n| Route | operationId | What it does | Statuses |\n| --- | --- | --- | --- |\n${rows.join("\n")}\n`,
  );
  return `${HEADER}\n${sections.join("\n")}\n${renderRequestBodies(document)}\n${renderEvents(document)}`;
}

const cell = (text) =>
  String(text ?? "")
    .replaceAll("|", "\\|")
    .replaceAll("\n", " ");

/** A JSON Schema's type in a few characters: `string`, `integer \| null`, `ContentPart[]`, `"a" \| "b"`. */
function typeOf(schema) {
  if (!schema || typeof schema !== "object") return "any";
  if (schema.$ref) return schema.$ref.split("/").at(-1);
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.enum) return schema.enum.map((value) => JSON.stringify(value)).join(" | ");
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) return variants.map(typeOf).join(" | ");
  if (Array.isArray(schema.type)) return schema.type.join(" | ");
  if (schema.type === "array") {
    const items = typeOf(schema.items);
    return items.includes(" | ") ? `(${items})[]` : `${items}[]`;
  }
  if (schema.type === "object" && schema.properties) return `{ ${Object.keys(schema.properties).join(", ")} }`;
  return schema.type ?? "any";
}

/** A table of an object schema's fields: name, type, whether required, description. */
function fieldTable(schema) {
  const required = new Set(schema.required ?? []);
  const rows = Object.entries(schema.properties ?? {}).map(
    ([name, field]) => `| \`${name}\` | \`${cell(typeOf(field))}\` | ${required.has(name) ? "yes" : "no"} | ${cell(field.description)} |`,
  );
  return `| Field | Type | Required | Description |\n| --- | --- | --- | --- |\n${rows.join("\n")}\n`;
}

/** Every JSON request body schema of the document, with its fields. */
function renderRequestBodies(document) {
  const names = new Set();
  for (const operations of Object.values(document.paths)) {
    for (const operation of Object.values(operations)) {
      const ref = operation.requestBody?.content?.["application/json"]?.schema?.$ref;
      if (ref) names.add(ref.split("/").at(-1));
    }
  }
  const schemas = document.components?.schemas ?? {};
  const sections = [...names].sort().map((name) => `### ${name}\n\n${fieldTable(schemas[name] ?? {})}`);
  return `## Request bodies\n\n${sections.join("\n")}`;
}

/** Every run event type (the Event union of the document), with its data's fields. */
function renderEvents(document) {
  const schemas = document.components?.schemas ?? {};
  const variants = (schemas.Event?.oneOf ?? schemas.Event?.anyOf ?? []).map(
    (variant) => schemas[variant.$ref?.split("/").at(-1)] ?? variant,
  );
  const sections = variants.map((variant) => {
    const type = variant.properties?.type?.const ?? variant.properties?.type?.enum?.[0];
    return `### ${type}\n\n${variant.description ?? ""}\n\n${fieldTable(variant.properties?.data ?? {})}`;
  });
  return (
    "## Events\n\nEvery event is `{ seq, type, run_id, session_id, created_at, data }` (JSON lists and SSE frames alike); " +
    "its `data` by `type`:\n\n" +
    sections.join("\n")
  );
}
