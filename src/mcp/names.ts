import { fnv1a } from "../core/fnv1a";

/** The longest tool name the providers take (`^[a-zA-Z0-9_-]{1,64}$`). */
const MAX_NAME = 64;

/**
 * The name the model calls an MCP server's tool by (docs/mcp.md, Naming): `<server_label>__<tool>`,
 * every character outside `[a-zA-Z0-9_-]` turned into `_`; a name over 64 characters is cut to 57,
 * then `_` and 6 hex digits of a hash of the whole name, so two long names stay apart.
 */
export function mcpToolName(serverLabel: string, tool: string): string {
  const name = `${serverLabel}__${tool.replace(/[^a-zA-Z0-9_-]/g, "_")}`;
  return name.length <= MAX_NAME ? name : `${name.slice(0, 57)}_${fnv1a(`${serverLabel}__${tool}`).slice(0, 6)}`;
}
