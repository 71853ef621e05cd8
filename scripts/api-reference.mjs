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
  return `${HEADER}\n${sections.join("\n")}`;
}
