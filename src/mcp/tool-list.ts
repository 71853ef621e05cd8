import { z } from "zod";
import type { Tool as ServerTool } from "@modelcontextprotocol/sdk/types.js";
import { type Agent, type McpTool, objectJsonSchema, schemaProblem, toolDescriptionProblem } from "../agents";
import { OPENAI_MAX_TOOLS } from "../agents/openai-limits";
import { depthExceeds, MAX_JSON_DEPTH } from "../core/json-depth";
import { log } from "../core/log";
import { TtlCache } from "../core/ttl-cache";
import { fnv1a } from "../core/fnv1a";
import type { McpConnections } from "./connections";
import { mcpToolName } from "./names";
import { authError } from "./connect";
import { describeFailure, McpServerError, statusOf } from "./errors";

/** One tool of an MCP server as a run offers it: the model's name for it (`<server_label>__<tool>`, names.ts), and the server's. */
const entrySchema = z.object({
  name: z.string(),
  server_label: z.string(),
  /** The tool's name on the server (what `tools/call` sends). */
  tool: z.string(),
  description: z.string().optional(),
  parameters: z.record(z.string(), z.unknown()),
});
export type McpToolEntry = z.output<typeof entrySchema>;

/** A run's stored list (session-store.ts, `run_mcp_tools`), read back. */
export const parseToolList = (stored: string): McpToolEntry[] => z.array(entrySchema).parse(JSON.parse(stored));

/** Pages of `tools/list` read from one server, at most. */
const MAX_PAGES = 20;
/** `tools/list` may take this long per page. */
const LIST_TIMEOUT_MS = 20_000;
/** Bytes (JSON) of a run's whole tool list, at most: it is stored with the run. */
const MAX_LIST_BYTES = 500_000;
/** The longest description offered (the agents' own tools take as much). */
const MAX_DESCRIPTION = 4096;
/** How long a listed server's tools serve new runs of the same agent version. */
export const TOOL_LIST_TTL_MS = 60_000;

const lists = new TtlCache<McpToolEntry[]>(200);

/**
 * The MCP tools a new run of `agent` offers, every server's `tools/list` read (all pages), or the
 * list this isolate read for the same agent version less than a minute ago. Tools the providers
 * would refuse (a schema that is not an object schema, too deep, invalid) are left out and logged.
 */
export async function listMcpTools(
  agent: Agent,
  tenant: string,
  connections: McpConnections,
  signal: AbortSignal,
): Promise<McpToolEntry[]> {
  const key = JSON.stringify([tenant, agent.id, agent.version]);
  const cached = lists.get(key, TOOL_LIST_TTL_MS);
  if (cached) return cached;
  const ticket = lists.ticket();
  const servers = agent.tools.filter((tool): tool is McpTool => tool.type === "mcp");
  const listed = await Promise.all(servers.map((server) => serverTools(server, connections, signal)));
  const entries = fitEntries(agent, listed.flat());
  lists.set(key, entries, ticket);
  return entries;
}

async function serverTools(
  server: McpTool,
  connections: McpConnections,
  signal: AbortSignal,
): Promise<{ server: McpTool; tool: ServerTool }[]> {
  const tools: ServerTool[] = [];
  let cursor: string | undefined;
  try {
    for (let page = 0; page < MAX_PAGES; page++) {
      const answer = await connections.use(server.server_label, (client) =>
        client.listTools(cursor === undefined ? undefined : { cursor }, { signal, timeout: LIST_TIMEOUT_MS }),
      );
      tools.push(...answer.tools);
      cursor = answer.nextCursor;
      if (!cursor) break;
    }
  } catch (error) {
    if (error instanceof McpServerError) throw error;
    const status = statusOf(error);
    if (status === 401 || status === 403) throw authError(server, status);
    throw new McpServerError(`MCP server ${server.server_label}: its tools could not be listed: ${describeFailure(error)}`, false);
  }
  const allowed = server.allowed_tools;
  return tools.filter((tool) => allowed === null || allowed.includes(tool.name)).map((tool) => ({ server, tool }));
}

/** Why a server's tool cannot be offered, or null. */
function toolProblem(tool: ServerTool): string | null {
  if (depthExceeds(tool.inputSchema, MAX_JSON_DEPTH)) return `inputSchema nests deeper than ${MAX_JSON_DEPTH} levels`;
  const parsed = objectJsonSchema.safeParse(tool.inputSchema);
  if (!parsed.success) return 'inputSchema is not a JSON Schema with root "type": "object"';
  return schemaProblem(parsed.data);
}

/** The entries, named, checked and within the provider's limits and the stored size. */
function fitEntries(agent: Agent, listed: { server: McpTool; tool: ServerTool }[]): McpToolEntry[] {
  const taken = new Set(agent.tools.flatMap((tool) => (tool.type === "mcp" ? [] : [tool.name])));
  const room =
    agent.provider === "openai" || agent.provider === "openai-chat"
      ? OPENAI_MAX_TOOLS - agent.tools.filter((t) => t.type !== "mcp").length
      : Number.POSITIVE_INFINITY;
  const entries: McpToolEntry[] = [];
  let bytes = 2;
  for (const { server, tool } of listed) {
    const skip = (reason: string) =>
      log({ event: "mcp_tool_skipped", server_label: server.server_label, tool: tool.name.slice(0, 256), reason });
    const problem = toolProblem(tool);
    if (problem) {
      skip(problem);
      continue;
    }
    let name = mcpToolName(server.server_label, tool.name);
    // Two server names that differ only in characters turned into `_`: the later one gets the hash form.
    if (taken.has(name)) name = `${name.slice(0, 57)}_${fnv1a(`${server.server_label}/${tool.name}`).slice(0, 6)}`;
    if (taken.has(name)) {
      skip("its name collides with another tool's");
      continue;
    }
    let description = tool.description?.slice(0, MAX_DESCRIPTION);
    if (description && toolDescriptionProblem(agent.provider, description)) description = description.slice(0, 1024);
    const entry: McpToolEntry = { name, server_label: server.server_label, tool: tool.name, parameters: tool.inputSchema };
    if (description) entry.description = description;
    const size = JSON.stringify(entry).length + 1;
    if (entries.length >= room || bytes + size > MAX_LIST_BYTES) {
      skip(
        entries.length >= room ? `the provider takes at most ${OPENAI_MAX_TOOLS} tools` : `the tool list passed ${MAX_LIST_BYTES} bytes`,
      );
      continue;
    }
    bytes += size;
    taken.add(name);
    entries.push(entry);
  }
  return entries;
}
