import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { base64Length, decodeBase64 } from "../core/base64";
import { newId } from "../core/ids";
import { IMAGE_TYPES, MAX_IMAGE_BYTES, type ImageType } from "../media/limits";
import { putMedia, type MediaScope } from "../media/store";
import { capOutput, CANCELLED, toolError, type ToolOutcome } from "../tools/outcome";
import type { McpConnections } from "./connections";
import { describeFailure, McpServerError, statusOf } from "./errors";
import type { McpToolEntry } from "./tool-list";

/** A call may go this long without progress notifications, and this long in all. */
const CALL_TIMEOUT_MS = 60_000;
const CALL_MAX_TOTAL_MS = 300_000;

/** Where a result's images are stored (R2, as the session's media) and which run they belong to. */
export type McpCallContext = { connections: McpConnections; bucket: R2Bucket; scope: MediaScope; run_id: string; signal: AbortSignal };

/** What a call produced; `fatal` when the server refused the credential: the run ends with it (docs/mcp.md). */
export type McpOutcome = ToolOutcome & { fatal?: string };

/**
 * Calls the server's tool with `tools/call` (docs/mcp.md, Results): text → the output, images →
 * stored as the session's media and named in the output, `structuredContent` → its JSON,
 * `isError` → a tool error; a failure to reach the server is a tool error the model reads, a
 * refused credential ends the run.
 */
export async function callMcpTool(entry: McpToolEntry, args: Record<string, unknown>, context: McpCallContext): Promise<McpOutcome> {
  const { signal } = context;
  let result: CallToolResult;
  try {
    result = (await context.connections.use(entry.server_label, (client) =>
      client.callTool({ name: entry.tool, arguments: args }, undefined, {
        signal,
        timeout: CALL_TIMEOUT_MS,
        resetTimeoutOnProgress: true,
        maxTotalTimeout: CALL_MAX_TOTAL_MS,
        onprogress: () => {},
      }),
    )) as CallToolResult;
  } catch (error) {
    if (signal.aborted) return toolError(CANCELLED);
    const status = statusOf(error);
    if ((error instanceof McpServerError && error.auth) || status === 401 || status === 403) {
      const message =
        error instanceof McpServerError ? error.message : `MCP server ${entry.server_label} refused Agentry's credentials (HTTP ${status})`;
      return { ...toolError(message), fatal: message };
    }
    return toolError(`MCP server ${entry.server_label} failed on ${entry.tool}: ${describeFailure(error)}`);
  }
  const parts = await Promise.all((result.content ?? []).map((part) => describePart(part, context)));
  const structured = result.structuredContent;
  const images = parts.filter((p) => p.image).map((p) => p.text);
  const text =
    structured !== undefined && !result.isError ? [JSON.stringify(structured), ...images].join("\n") : parts.map((p) => p.text).join("\n");
  const output = capOutput(text);
  return result.isError ? toolError(output) : { output, is_error: false };
}

type Part = CallToolResult["content"][number];

/** One content item as text; an image is stored first and named by its media id. */
async function describePart(part: Part, context: McpCallContext): Promise<{ text: string; image?: true }> {
  switch (part.type) {
    case "text":
      return { text: part.text };
    case "image":
      return { text: await storeImage(part.data, part.mimeType, context), image: true };
    case "audio":
      return { text: `[audio ${part.mimeType}: not kept]` };
    case "resource_link":
      return { text: `[resource ${part.uri}${part.name ? ` (${part.name})` : ""}]` };
    case "resource":
      return { text: "text" in part.resource ? String(part.resource.text) : `[resource ${part.resource.uri}: binary, not kept]` };
    default:
      return { text: "" };
  }
}

/** Stores an image of a result as the session's media; its line in the output names it. */
async function storeImage(data: string, mimeType: string, context: McpCallContext): Promise<string> {
  if (!(IMAGE_TYPES as readonly string[]).includes(mimeType)) return `[image ${mimeType}: not a stored image type]`;
  const size = base64Length(data);
  if (size === null) return `[image ${mimeType}: not valid base64]`;
  if (size > MAX_IMAGE_BYTES) return `[image ${mimeType}: ${size} bytes, over the ${MAX_IMAGE_BYTES}-byte limit]`;
  const mediaId = newId("med");
  await putMedia(context.bucket, context.scope, mediaId, {
    media_type: mimeType as ImageType,
    bytes: decodeBase64(data),
    run_id: context.run_id,
  });
  return `[image ${mimeType}, media_id ${mediaId}, ${size} bytes]`;
}
