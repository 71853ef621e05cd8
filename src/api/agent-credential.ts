import type { AgentDefinition } from "../agents";
import { findCredentialInfo } from "../credentials";
import { providerNameOf } from "../providers";
import { assertNoProblems, notFound } from "./errors";

/**
 * The credential an agent names must be the tenant's (404 otherwise, as if it did not exist:
 * another tenant's credential included) and for the agent's provider (400 naming `credential`).
 */
export async function assertCredentialUsable(db: D1Database, tenant: string, definition: AgentDefinition): Promise<void> {
  const id = definition.credential;
  if (id === null) return;
  if (definition.provider === "mock") {
    assertNoProblems([{ path: "credential", message: "the offline model (provider mock) takes no credential" }]);
  }
  const info = await findCredentialInfo(db, tenant, id);
  if (!info) throw notFound("Credential", id);
  const provider = providerNameOf(definition.provider);
  if (info.provider !== provider) {
    assertNoProblems([{ path: "credential", message: `credential ${id} is for ${info.provider}; this agent's provider is ${provider}` }]);
  }
}
