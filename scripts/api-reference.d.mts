/** Markdown tables of every operation of an OpenAPI document, grouped by tag (docs/api.md). */
export function renderApiReference(document: { paths: Record<string, Record<string, unknown>> }): string;
