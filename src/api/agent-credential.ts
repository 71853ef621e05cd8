import type { AgentDefinition } from "../agents";
import { findCredentialInfo } from "../credentials";
import { providerNameOf } from "../providers";
import { assertNoProblems, notFound } from "./errors";

/**
 * The credential an agent names must be the tenant's (404 otherwise, as if it did not exist:
 * another tenant's credential included) and for the agent's provider (400 naming `credential`).
 * Each MCP tool's credential must be one of the tenant's of type `mcp`, or `mcp_oauth` authorized
 * for the same server_url (400 naming `tools.<i>.credential`; another tenant's reads as none).
 */
export async function assertCredentialUsable(db: D1Database, tenant: string, definition: AgentDefinition): Promise<void> {
  await assertMcpCredentials(db, tenant, definition);
  const id = definition.credential;
  if (id === null) return;
  if (definition.provider === "mock") {
    assertNoProblems([{ path: "credential", message: "the offline model (provider mock) takes no credential" }]);
  }
  const info = await findCredentialInfo(db, tenant, id);
  if (!info) throw notFound("Credential", id);
  const provider = providerNameOf(definition.provider);
  if (info.provider !== provider) {
    assertNoProblems([
      { path: "credential", message: `credential ${id} is for ${info.provider ?? "MCP servers"}; this agent's provider is ${provider}` },
    ]);
  }
}

async function assertMcpCredentials(db: D1Database, tenant: string, definition: AgentDefinition): Promise<void> {
  const named = definition.tools.flatMap((tool, index) =>
    tool.type === "mcp" && tool.credential !== null ? [{ index, id: tool.credential, url: tool.server_url }] : [],
  );
  const infos = await Promise.all(named.map(({ id }) => findCredentialInfo(db, tenant, id)));
  assertNoProblems(
    named.flatMap(({ index, id, url }, at) => {
      const info = infos[at];
      const path = `tools.${index}.credential`;
      if (!info) return [{ path, message: `the tenant has no credential ${id}` }];
      if (info.type === "provider") {
        return [{ path, message: `credential ${id} is a provider credential; an MCP server takes a credential of type mcp or mcp_oauth` }];
      }
      // OAuth tokens are issued for one server (its resource): they go to no other.
      if (info.type === "mcp_oauth" && info.base_url !== url) {
        return [{ path, message: `credential ${id} was authorized for ${info.base_url}, not this server_url` }];
      }
      return [];
    }),
  );
}
