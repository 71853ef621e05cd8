/** The most optional parameters Anthropic compiles across the strict schemas of one request. */
export const MAX_OPTIONAL_PARAMETERS = 24;
/** The most union-typed parameters (a `type` array or `anyOf`) across the strict schemas of one request. */
export const MAX_UNION_PARAMETERS = 16;

type Counts = { optional: number; unions: number };

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * What Anthropic counts in a structured-output or strict-tool schema before it compiles the
 * grammar: properties an object does not list in `required` (optional parameters), and
 * subschemas with a `type` array of more than one type or an `anyOf` (union-typed parameters;
 * the SDK's transform turns `oneOf` into `anyOf`, so both count). The root itself is no parameter.
 */
export function strictSchemaCounts(schema: unknown): Counts {
  const counts: Counts = { optional: 0, unions: 0 };
  const visit = (node: unknown, root: boolean) => {
    if (!isObject(node)) return;
    const union = (Array.isArray(node.type) && node.type.length > 1) || Array.isArray(node.anyOf) || Array.isArray(node.oneOf);
    if (union && !root) counts.unions += 1;
    const properties = isObject(node.properties) ? node.properties : {};
    const required = new Set(Array.isArray(node.required) ? node.required : []);
    counts.optional += Object.keys(properties).filter((name) => !required.has(name)).length;
    for (const child of Object.values(properties)) visit(child, false);
    for (const key of ["$defs", "definitions"]) if (isObject(node[key])) for (const child of Object.values(node[key])) visit(child, true);
    for (const key of ["anyOf", "oneOf", "allOf", "prefixItems"])
      if (Array.isArray(node[key])) for (const child of node[key]) visit(child, true);
    if (node.items !== undefined) visit(node.items, false);
  };
  visit(schema, true);
  return counts;
}

/** The counts of several schemas together: the limits are per request, not per schema. */
export const totalCounts = (schemas: unknown[]): Counts =>
  schemas
    .map(strictSchemaCounts)
    .reduce((sum, c) => ({ optional: sum.optional + c.optional, unions: sum.unions + c.unions }), { optional: 0, unions: 0 });
