/**
 * An MCP server could not be reached or answered outside the protocol (HTTP status, transport,
 * timeout). `auth` marks a refused credential (401 / 403): the run ends with it, the model is not
 * asked to work around it. Messages never hold a credential: the SDK's errors carry the server's
 * answer, never the request's headers.
 */
export class McpServerError extends Error {
  constructor(
    message: string,
    readonly auth: boolean,
  ) {
    super(message);
    this.name = "McpServerError";
  }
}

/**
 * The server answered 403 `insufficient_scope` (its `WWW-Authenticate` challenge names the scope the
 * request needs): a person must approve the larger scope, so the run ends with it (docs/mcp.md, OAuth).
 */
export class McpScopeError extends McpServerError {
  constructor(
    label: string,
    /** The scope the server's challenge names (space-separated scope tokens). */
    readonly scope: string,
  ) {
    super(`MCP server ${label} needs the scope "${scope}" (it answered 403 insufficient_scope)`, true);
    this.name = "McpScopeError";
  }
}

/** The HTTP status of an MCP SDK transport error (`StreamableHTTPError`, `SseError`), if it has one. */
export function statusOf(error: unknown): number | null {
  if (typeof error !== "object" || error === null || !("code" in error)) return null;
  const code = (error as { code: unknown }).code;
  return typeof code === "number" && code >= 100 && code < 600 ? code : null;
}

/** A short, secret-free description of a failure, for the model or the run's error. */
export function describeFailure(error: unknown): string {
  if (error instanceof Error) {
    if (error.name === "TimeoutError" || /timed out/i.test(error.message)) return "the request timed out";
    return error.message.slice(0, 500);
  }
  return "the request failed";
}
